"""Slurm wing: the Slinky cluster and what it needs (secrets, database, accounts, scaling programs, client Jobs)."""
