"""What-if: a discrete-event simulation of a stack's scheduler (Kueue or Slurm, as rendered) on a workload, for
utilization, queue waits and the cost of a used GPU-hour. Pure: no Pulumi. Public API in ``whatif.api``."""
