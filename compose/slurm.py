"""The Slurm path of ``scheduling`` (``workload: slurm``): Slinky on the cluster, configured from the spec."""
from __future__ import annotations

import pulumi

from stacks.facts import PoolFacts
from stacks.scheduling_spec import Workload
from stacks.spec import StackSpec


def build_slurm_path(spec: StackSpec, pools: dict[str, PoolFacts], cluster: pulumi.Resource, k8s_provider) -> None:
    """SlurmCluster through the cluster's Kubernetes provider, after the cluster and its system pool exist (the
    operator, slurmctld, slurmdbd and MariaDB run on the untainted system pool). Nothing unless ``workload: slurm``."""
    if spec.scheduling is None or spec.scheduling.workload != Workload.SLURM:
        return
    from components.slurm_cluster import SlurmCluster

    SlurmCluster("slurm", spec.scheduling, [pools[p.name] for p in spec.node_pools], spec.cluster.name,
                 protect=spec.cluster.deletion_protection, after=[cluster],
                 opts=pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster]))
