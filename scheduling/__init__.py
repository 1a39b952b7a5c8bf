"""Pure renderers of scheduler configuration (Kueue objects, Kubeflow Trainer runtimes, Slurm files). No Pulumi."""
