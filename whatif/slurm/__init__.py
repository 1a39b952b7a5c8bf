"""The Slurm scheduler of the simulator: jobs, multifactor priority, backfill, power saving."""
