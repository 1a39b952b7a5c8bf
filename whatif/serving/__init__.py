"""Serving and training simulated together on one stack (``python -m whatif.serving``): request traffic over the day,
replicas scaled on vLLM's signals, training borrowing serving's idle quota and preempted when Kueue reclaims it."""
