"""Reserved pools, the facts every stack reads: whether a pool is an EC2 Capacity Block, and how many nodes its
reservation bills. Pure. The block's window, price and schedule are in ``stacks/plan/capacity_block.py``, which only a stack
with a capacity block loads (the what-if's and preview's import floor: its dataclasses cost start-up time)."""

from __future__ import annotations

from catalog import CapacityType
from stacks.spec.capacity import AwsReservationKind
from stacks.spec.stack import NodePool

RESERVED_NODES_TAG = "gpu-cluster/reserved-nodes"
"""EKS node group tag: nodes the reservation bills whether they run or not (read by the cost policies)."""
RESERVED_NODES_LABEL = "gpu-cluster-reserved-nodes"
"""The same on a GKE node pool, as a GCE resource label (keys allow no `/`)."""


def is_capacity_block(pool: NodePool) -> bool:
    cap = pool.capacity
    return cap.type == CapacityType.RESERVATION and cap.reservation_kind == AwsReservationKind.CAPACITY_BLOCK


def reserved_nodes(pool: NodePool) -> int | None:
    """Nodes the reservation bills whether they run or not: ``capacity.reservedNodes``, else maxNodes; None when the
    pool does not consume a reservation."""
    if pool.capacity.type != CapacityType.RESERVATION:
        return None
    return pool.capacity.reserved_nodes or pool.max_nodes
