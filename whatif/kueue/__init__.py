"""The Kueue scheduler of the simulator: queues, cohorts, flavor assignment, preemption, the scheduling cycle."""
