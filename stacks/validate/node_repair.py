"""EKS node settings: node auto-repair thresholds (``nodeRepair``) and gp3 root volume performance (``rootVolume``)
are EKS settings, refused on GKE; repair thresholds fit the pool; the root volume's throughput fits its IOPS.

Bounds of each number (≥ 1; gp3 throughput 125-1000 MiB/s, IOPS 3000-16000) are in the model
(``stacks/spec/eks_node.py``). Every problem is reported through the pool's scope (``issues.pool(i, name)``), so
each message names the pool.
"""

from __future__ import annotations

from typing import Iterable

from catalog import Cloud
from stacks.spec.eks_node import GP3_MIBPS_PER_IOPS, root_volume_performance
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues

GKE_REPAIR = "GKE node auto-repair has no per-pool thresholds"
GKE_DISK = "GKE boot disks are sized with diskSizeGib; their performance follows the disk type and size"


def check_node_repair(issues: Issues, cloud: Cloud, pools: Iterable[tuple[int, NodePool]]) -> None:
    for i, pool in pools:
        scope = issues.pool(i, pool.name)
        if cloud != Cloud.AWS:
            if pool.node_repair is not None:
                scope.error(
                    "nodeRepair",
                    f"node repair thresholds are an EKS setting: {GKE_REPAIR}",
                    pool.node_repair.model_dump(by_alias=True, exclude_none=True),
                    allowed="no nodeRepair on GKE",
                    fix="remove nodeRepair from this pool",
                )
            if pool.root_volume is not None:
                scope.error(
                    "rootVolume",
                    f"root volume throughput and IOPS are an EKS setting: {GKE_DISK}",
                    pool.root_volume.model_dump(by_alias=True, exclude_none=True),
                    allowed="no rootVolume on GKE",
                    fix="remove rootVolume from this pool",
                )
            continue
        _check_repair(scope, pool)
        _check_root_volume(scope, pool)


def _check_repair(scope: Issues, pool: NodePool) -> None:
    repair = pool.node_repair
    if repair is None:
        return
    for key, value in (
        ("maxParallelNodesRepaired", repair.max_parallel_nodes_repaired),
        ("maxUnhealthyNodesThreshold", repair.max_unhealthy_nodes_threshold),
    ):
        if value is not None and value > pool.max_nodes:
            scope.at("nodeRepair").error(
                key,
                f"more than the pool's maxNodes ({pool.max_nodes})",
                value,
                allowed=f"1-{pool.max_nodes}",
                fix=f"set {key} to at most {pool.max_nodes}, or raise maxNodes",
            )


def _check_root_volume(scope: Issues, pool: NodePool) -> None:
    if pool.root_volume is None:
        return
    throughput, iops = root_volume_performance(pool.root_volume)
    if throughput > iops * GP3_MIBPS_PER_IOPS:
        needed = int(-(-throughput // GP3_MIBPS_PER_IOPS))
        scope.at("rootVolume").error(
            "throughputMiBps",
            f"gp3 throughput above IOPS x 0.25 ({iops} IOPS allow {int(iops * GP3_MIBPS_PER_IOPS)} MiB/s)",
            throughput,
            allowed=f"125-{min(1000, int(iops * GP3_MIBPS_PER_IOPS))} with {iops} IOPS",
            fix=f"raise iops to at least {needed}, or lower throughputMiBps",
        )
