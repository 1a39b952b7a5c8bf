"""The planner's side: facts derived from the validated spec and the catalog (pool facts, GPU runtime, fabric,
pod start, capacity, queued provisioning, maintenance) and the scheduler plans (Kueue placements, quota, Slurm).
Pure: no Pulumi."""
