"""What runs on every cluster once its pools exist, in order: the GPU runtime, the pre-pull DaemonSets, then Kueue +
Kubeflow or Slurm, then the NVIDIA DRA driver and ComputeDomains of rack-scale NVLink pools."""

from __future__ import annotations

from typing import Mapping, Sequence

import pulumi

from compose.fleet import FleetExports, build_fleet
from compose.gpu_runtime import build_gpu_runtime
from compose.kubeflow import build_kubeflow_path
from compose.nvlink import build_nvlink
from compose.prepull import build_prepull
from compose.serving import build_serving
from compose.slurm import build_slurm_path
from stacks.plan.stack import StackPlan


def build_cluster_layers(
    plan: StackPlan,
    cluster: pulumi.Resource,
    k8s_provider: pulumi.ProviderResource,
    kueue_after: Sequence[pulumi.Resource] = (),
    cloud_provider: pulumi.ProviderResource | None = None,
    cluster_name: pulumi.Input[str] | None = None,
    node_pools: Mapping[str, pulumi.Resource] | None = None,
) -> FleetExports:
    """``kueue_after``: what Kueue must start after besides the cluster (EKS: the ProvisioningRequest CRD).
    ``node_pools``: the GPU pools' resources by pool name (serving workloads wait for theirs). Returns the fleet
    outputs to export (none for a standalone cluster)."""
    build_gpu_runtime(plan, cluster, k8s_provider)
    build_prepull(plan, cluster, k8s_provider)
    kubeflow = build_kubeflow_path(plan, cluster, k8s_provider, kueue_after)
    namespaces = dict(kubeflow.namespaces)
    namespaces.update(build_slurm_path(plan, cluster, k8s_provider, cloud_provider, cluster_name))
    build_nvlink(plan, cluster, k8s_provider, namespaces)
    serving_ns = plan.spec.serving.namespace if plan.spec.serving is not None else None
    build_serving(
        plan,
        cluster,
        k8s_provider,
        [r for r in (kubeflow.kueue, namespaces.get(serving_ns or "")) if r is not None],
        cloud_provider=cloud_provider,
        cluster_name=cluster_name,
        node_pools=node_pools,
    )
    return build_fleet(plan, cluster, k8s_provider, kubeflow.kueue, kubeflow.trainer)
