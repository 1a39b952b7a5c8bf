"""A MultiKueue fleet in the simulator: the manager dispatching to worker clusters."""
