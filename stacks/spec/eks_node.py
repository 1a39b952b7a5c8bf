"""Per-pool EKS node settings: node auto-repair thresholds (``nodePools[].nodeRepair``) and the gp3 root volume's
throughput and IOPS (``nodePools[].rootVolume``).

Shape only lives here; EKS-only and cross-field rules live in ``stacks/validate/node_repair.py``, the defaults a pool
gets when a setting is omitted in ``repair_config`` and ``root_volume_performance`` below.
"""

from __future__ import annotations

from pydantic import Field

from stacks.spec.model_base import SpecModel

GPU_ROOT_THROUGHPUT_MIBPS = 1000
"""gp3 root volume throughput of GPU nodes: pytorch CI runs GPU node roots at 1000 MiB/s (≥ 600 required) so ~10 GB
images pull fast (gp3's default is 125 MiB/s)."""
GPU_ROOT_IOPS = 4000
"""gp3 needs IOPS ≥ throughput / 0.25 MiB/s per IOPS: 1000 MiB/s takes at least 4000 IOPS."""
GP3_MIBPS_PER_IOPS = 0.25
GP3_THROUGHPUT = (125, 1000)
GP3_IOPS = (3000, 16000)
SCARCE_CAPACITY_PARALLEL_REPAIRS = 1
"""Capacity-block / reservation pools repair one node at a time: a replacement has to fit the reserved capacity."""


class NodeRepair(SpecModel):
    max_parallel_nodes_repaired: int | None = Field(
        None,
        ge=1,
        description=(
            "EKS only: at most this many nodes of the pool are repaired (replaced or rebooted) at a time. Omitted: 1 on a "
            "capacity-block or reservation pool (a replacement has to fit the reserved capacity), EKS's default elsewhere."
        ),
    )
    max_unhealthy_nodes_threshold: int | None = Field(
        None,
        ge=1,
        description=(
            "EKS only: with more unhealthy nodes than this, node auto-repair stops (a fleet-wide fault is not repaired "
            "node by node). Omitted: EKS's default."
        ),
    )


class RootVolume(SpecModel):
    throughput_mibps: int | None = Field(
        None,
        alias="throughputMiBps",
        ge=GP3_THROUGHPUT[0],
        le=GP3_THROUGHPUT[1],
        description=(
            "EKS only: gp3 root volume throughput in MiB/s, 125-1000, at most IOPS x 0.25. Omitted: 1000 on GPU nodes "
            "(multi-GB images pull fast; gp3's own default is 125), or what `iops` allows."
        ),
    )
    iops: int | None = Field(
        None,
        ge=GP3_IOPS[0],
        le=GP3_IOPS[1],
        description=(
            "EKS only: gp3 root volume IOPS, 3000-16000, at least throughput / 0.25. Omitted: 4000 on GPU nodes (or what `throughputMiBps` needs)."
        ),
    )


def repair_config(setting: NodeRepair | None, scarce_capacity: bool) -> dict:
    """The node group's ``node_repair_config``: repair on, with the pool's thresholds or the defaults above."""
    setting = setting or NodeRepair()
    out: dict = {"enabled": True}
    parallel = setting.max_parallel_nodes_repaired
    if parallel is None and scarce_capacity:
        parallel = SCARCE_CAPACITY_PARALLEL_REPAIRS
    if parallel is not None:
        out["max_parallel_nodes_repaired_count"] = parallel
    if setting.max_unhealthy_nodes_threshold is not None:
        out["max_unhealthy_node_threshold_count"] = setting.max_unhealthy_nodes_threshold
    return out


def root_volume_performance(setting: RootVolume | None) -> tuple[int, int]:
    """(throughput MiB/s, IOPS) of a GPU node's gp3 root volume: a throughput given alone gets the IOPS it needs, IOPS
    given alone the throughput they allow (at most the 1000 MiB/s default)."""
    setting = setting or RootVolume()
    throughput = setting.throughput_mibps or (
        GPU_ROOT_THROUGHPUT_MIBPS
        if setting.iops is None
        else min(GPU_ROOT_THROUGHPUT_MIBPS, int(setting.iops * GP3_MIBPS_PER_IOPS))
    )
    iops = setting.iops
    if iops is None:
        iops = (
            GPU_ROOT_IOPS
            if setting.throughput_mibps is None
            else max(GP3_IOPS[0], int(-(-throughput // GP3_MIBPS_PER_IOPS)))
        )
    return throughput, iops
