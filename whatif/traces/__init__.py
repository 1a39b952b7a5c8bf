"""Trace adapters: public GPU-cluster traces -> trace records -> jobs on a stack's queues (``replay.py``)."""
