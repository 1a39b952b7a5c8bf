"""Helm values of the NVIDIA DRA driver (``dra-driver-nvidia-gpu``) for ComputeDomains only. Pure: no Pulumi.

The GPUs stay with the device plugin (GKE's, or NVIDIA's chart on EKS): ``resources.gpus.enabled: false`` ("GPU
allocation via DRA is not yet officially supported"; ComputeDomains are), ``resources.computeDomains.enabled: true``
(the driver's ``docs/install.md``; the EKS UltraServer guide's recommended values; cluster-toolkit's A4X blueprint,
shared facts fleet-nvl72-podstart-research.md §2.1, §2.4). The kubelet plugin runs only on the rack-scale pools, by the
pool label (the chart's default affinity wants NFD labels GKE nodes do not have), and tolerates exactly their taints
(the GPU taint, GKE's arm64 taint, the pools' own). On GKE the driver lives under ``/home/kubernetes/bin/nvidia``
(``nvidiaDriverRoot``, as cluster-toolkit sets it); on EKS the AL2023 NVIDIA AMI has it at ``/``, the chart default.
The controller runs on the system pool (no GPU taint there).
"""

from __future__ import annotations

from typing import Sequence

from catalog import Cloud
from render.nvidia_values import GKE_NVIDIA_HOST_DIR, daemon_tolerations, pool_affinity
from stacks.plan.facts import PoolFacts

NAMESPACE = "dra-driver-nvidia-gpu"
"""The namespace of the driver's install guide."""


def dra_driver_values(cloud: Cloud, pools: Sequence[PoolFacts]) -> dict:
    values: dict = {
        "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}},
        "kubeletPlugin": {"affinity": pool_affinity(pools), "tolerations": daemon_tolerations(pools)},
    }
    if cloud == Cloud.GCP:
        values["nvidiaDriverRoot"] = GKE_NVIDIA_HOST_DIR
    return values
