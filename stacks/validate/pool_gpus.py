"""GPUs per node and node range of each pool the catalog resolves: what the scheduling rules weigh quotas against.

Shared by the scheduling rules of both workloads and by the serving rules (``stacks/validate/serving.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from catalog import CapacityType, Catalog, Cloud
from stacks.plan.kueue_topology import tas_capable
from stacks.plan.queued import is_queued
from stacks.spec.stack import NodePool


@dataclass(frozen=True)
class PoolCapacity:
    index: int
    name: str
    machine_type: str
    gpus_per_node: int
    min_nodes: int
    max_nodes: int
    reservation: str | None = None
    """The reservation the pool consumes: its maxNodes is what the reservation holds, never a knob to raise."""
    queued: bool = False
    """Queued provisioning: nodes come through ProvisioningRequests, so topology-aware placement can use them."""

    @property
    def tas(self) -> bool:
        return tas_capable(self.min_nodes, self.max_nodes, self.queued)

    @property
    def max_gpus(self) -> int:
        return self.gpus_per_node * self.max_nodes


def pool_capacities(
    cat: Catalog, cloud: Cloud | None, pools: Iterable[tuple[int, NodePool]]
) -> dict[str, PoolCapacity]:
    """GPUs per node and node range of each pool whose machine type resolves in the catalog."""
    out: dict[str, PoolCapacity] = {}
    if cloud is None:
        return out
    for i, pool in pools:
        acc = pool.accelerator
        machine = cat.resolve(cloud, pool.machine_type, acc.type if acc else None, acc.count if acc else None)
        if machine is not None and pool.name not in out:
            reservation = (
                pool.capacity.reservation or "a reservation" if pool.capacity.type == CapacityType.RESERVATION else None
            )
            out[pool.name] = PoolCapacity(
                i,
                pool.name,
                pool.machine_type,
                machine.gpus,
                pool.min_nodes,
                pool.max_nodes,
                reservation,
                is_queued(pool),
            )
    return out
