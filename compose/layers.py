"""What runs on every cluster once its pools exist, in order: the GPU runtime, the pre-pull DaemonSets, then Kueue +
Kubeflow or Slurm, then the NVIDIA DRA driver and ComputeDomains of rack-scale NVLink pools."""
from __future__ import annotations

from typing import Sequence

import pulumi

from compose.fleet import FleetExports, build_fleet
from compose.gpu_runtime import build_gpu_runtime
from compose.prepull import build_prepull
from compose.kubeflow import build_kubeflow_path
from compose.nvlink import build_nvlink
from compose.slurm import build_slurm_path
from plan.facts import PoolFacts
from spec.stack import StackSpec


def build_cluster_layers(spec: StackSpec, pools: dict[str, PoolFacts], cluster: pulumi.Resource,
                         k8s_provider, kueue_after: Sequence[pulumi.Resource] = ()) -> FleetExports:
    """``kueue_after``: what Kueue must start after besides the cluster (EKS: the ProvisioningRequest CRD). Returns
    the fleet outputs to export (none for a standalone cluster)."""
    build_gpu_runtime(spec, pools, cluster, k8s_provider)
    build_prepull(spec, pools, cluster, k8s_provider)
    kubeflow = build_kubeflow_path(spec, pools, cluster, k8s_provider, kueue_after)
    namespaces = dict(kubeflow.namespaces)
    namespaces.update(build_slurm_path(spec, pools, cluster, k8s_provider))
    build_nvlink(spec, pools, cluster, k8s_provider, namespaces)
    return build_fleet(spec, pools, cluster, k8s_provider, kubeflow.kueue, kubeflow.trainer)
