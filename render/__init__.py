"""Pure renderers of Kubernetes and cloud documents from the plan: Kueue objects and manager config, Kubeflow Trainer
runtimes, Slinky Helm values, fabric pod wiring and DRA claims, the GKE fabric manifests, NVIDIA Helm values, the
pre-pull DaemonSet, EKS nodeadm user data. No Pulumi."""
