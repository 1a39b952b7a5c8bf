"""Kubernetes wing (either cloud): NVIDIA runtime, Kueue, Kubeflow (Trainer, Katib, Pipelines), fabric claims,
image pre-pull, and the shared object helpers."""
