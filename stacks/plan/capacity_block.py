"""Derived facts of reserved pools: how many nodes are billed, and an EC2 Capacity Block's window, scaling times and
price per hour. Pure: read by validation, components (the Auto Scaling schedules), the preview's cost and its
summary.

AWS rules used here (EC2 user guide, "Find and purchase Capacity Blocks" and "Work with Capacity Blocks"; EKS user
guide, "Create self-managed nodes with Capacity Blocks for ML" and "Create a managed node group with Capacity
Blocks for ML"): blocks last 1-14 days in 1-day steps, then 7-day steps up to 182 days; every block ends at
11:30 UTC; a managed node group on a block is upgraded only at desired size 0. The end-of-block times (EC2 starts
terminating 30 minutes before the end, 60 on an UltraServer block; EKS's own "Capacity Scaledown Before Reservation
End" action at 40) are row ``aws-capacity-block-end-termination`` of ``catalog/data/cloud-limits.csv``. gpu-cluster's
scale-down runs 15 minutes before EC2's terminations (45 minutes before the end, 75 on an UltraServer block), with
min 0 so nothing it set earlier holds the group up.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from catalog import Cloud
from catalog.cloud_limits import cloud_limit
from stacks.plan.reservation import is_capacity_block, reserved_nodes
from stacks.spec.stack import NodePool

_TERMINATION = cloud_limit("aws-capacity-block-end-termination").value.split()  # minutes: instance, UltraServer
EC2_TERMINATION_LEAD = dt.timedelta(minutes=int(_TERMINATION[0]))
"""EC2 starts terminating a block's instances this long before its end (30 minutes): what the what-if models as the
nodes going."""
ULTRASERVER_TERMINATION_LEAD = dt.timedelta(minutes=int(_TERMINATION[1]))
"""The same on an UltraServer block (P6e-GB200): EC2 starts an hour before the end."""
DRAIN_LEAD = dt.timedelta(minutes=15)
"""gpu-cluster's scale-down runs this long before EC2's terminations, so pods are drained by the node group's
scale-in, not cut by EC2."""
SCALE_DOWN_LEAD = EC2_TERMINATION_LEAD + DRAIN_LEAD
"""45 minutes on an instance block: before EKS's own action (40 minutes) and EC2's terminations (30)."""
BLOCK_END_UTC = dt.time(11, 30)
"""Every capacity block ends at 11:30 UTC."""
MAX_BLOCK_HOURS = 182 * 24
MIN_BLOCK_HOURS = 24
MAX_BLOCK_INSTANCES = 64
"""EC2: each Capacity Block holds up to 64 instances."""

BLOCK_FEE_TAG = "gpu-cluster/capacity-block-usd"
"""EKS node group tag: the capacity block's declared upfront fee in USD; absent means unknown."""
BLOCK_START_TAG = "gpu-cluster/capacity-block-start"
BLOCK_END_TAG = "gpu-cluster/capacity-block-end"


@dataclass(frozen=True)
class BlockWindow:
    start: dt.datetime
    end: dt.datetime
    ultraserver: bool = False
    """An UltraServer block: EC2 terminates its instances 60 minutes before the end, not 30."""

    @property
    def hours(self) -> float:
        return (self.end - self.start).total_seconds() / 3600

    @property
    def scale_up_at(self) -> dt.datetime:
        return self.start

    @property
    def terminates_at(self) -> dt.datetime:
        """When EC2 starts terminating the block's instances."""
        return self.end - (ULTRASERVER_TERMINATION_LEAD if self.ultraserver else EC2_TERMINATION_LEAD)

    @property
    def scale_down_at(self) -> dt.datetime:
        # an UltraServer block's instances go at end-60, before EKS's own end-40 action: only ours drains them
        return self.terminates_at - DRAIN_LEAD

    def as_dict(self) -> dict[str, object]:
        return {
            "start": iso(self.start),
            "end": iso(self.end),
            "hours": round(self.hours, 4),
            "scaleUpAt": iso(self.scale_up_at),
            "scaleDownAt": iso(self.scale_down_at),
        }


def iso(moment: dt.datetime) -> str:
    """``2027-01-04T11:30:00Z``: UTC, as Auto Scaling scheduled actions take their times."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def block_window(pool: NodePool) -> BlockWindow | None:
    """The declared window of a capacity-block pool (None without one, or when its times lack a time zone, which
    validation refuses)."""
    window = pool.capacity.window
    if window is None or not is_capacity_block(pool) or window.start.tzinfo is None:
        return None
    ultra = pool.capacity.ultraserver_type is not None
    if window.end is not None:
        return None if window.end.tzinfo is None else BlockWindow(window.start, window.end, ultra)
    if window.duration_hours is None:
        return None
    try:
        return BlockWindow(window.start, window.start + dt.timedelta(hours=window.duration_hours), ultra)
    except OverflowError:  # past year 9999: validation refuses it (the length, or the calendar)
        return None


@dataclass(frozen=True)
class BlockPrice:
    """A capacity block's upfront fee spread over its window and its nodes: paid whether nodes run or not."""

    fee_usd: float
    hours: float
    nodes: int
    gpus_per_node: int

    @property
    def usd_per_hour(self) -> float:
        return self.fee_usd / self.hours

    @property
    def usd_per_node_hour(self) -> float:
        return self.usd_per_hour / self.nodes

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.usd_per_node_hour / self.gpus_per_node


def block_price(cloud: Cloud, pool: NodePool, gpus_per_node: int) -> BlockPrice | None:
    """The block's price when both its window and its fee are declared; None otherwise (the cost is unknown)."""
    window = block_window(pool)
    fee = pool.capacity.upfront_fee_usd
    nodes = reserved_nodes(pool)
    if cloud != Cloud.AWS or window is None or fee is None or nodes is None or window.hours <= 0:
        return None
    return BlockPrice(fee_usd=fee, hours=window.hours, nodes=nodes, gpus_per_node=gpus_per_node)


@dataclass(frozen=True)
class ScheduledSize:
    """One Auto Scaling scheduled action on the block's node group: the sizes it sets, and when."""

    role: str
    """``scale-up`` (the window's start) or ``scale-down`` (45 minutes before its end)."""
    at: dt.datetime
    min_size: int
    max_size: int
    desired: int

    @property
    def at_iso(self) -> str:
        """``at`` as Auto Scaling's ``start_time`` wants it (UTC, ``Z``)."""
        return iso(self.at)

    def as_dict(self) -> dict[str, object]:
        return {
            "action": self.role,
            "at": iso(self.at),
            "minSize": self.min_size,
            "maxSize": self.max_size,
            "desiredCapacity": self.desired,
        }


def block_schedule(pool: NodePool, now: dt.datetime, fill: bool = False) -> list[ScheduledSize]:
    """Scale up to the pool's sizes at the start, to zero (min and max 0 too: nothing launches into an ending block, and
    no floor set by the scale-up holds it) 45 minutes before the end. An action whose time has passed is left out: Auto Scaling refuses times in the past
    (validation warns about a started block and refuses one past its scale-down time).

    ``fill``: the pool's pods claim DRA devices (an IMEX channel), which the Cluster Autoscaler's AWS scale-from-zero
    template cannot show, so it would never scale the group up: the scale-up action itself brings up the block's
    nodes (min = desired = the reserved nodes) for the whole window."""
    return [a for a in _block_actions(pool, fill) if a.at > now]


def _block_actions(pool: NodePool, fill: bool) -> list[ScheduledSize]:
    window = block_window(pool)
    if window is None or window.end <= window.start:
        return []
    block = min(reserved_nodes(pool) or pool.max_nodes, pool.max_nodes)
    floor = block if fill else pool.min_nodes
    return [
        ScheduledSize("scale-up", window.scale_up_at, floor, pool.max_nodes, floor),
        ScheduledSize("scale-down", window.scale_down_at, 0, 0, 0),
    ]


def sizes_in_force(pool: NodePool, now: dt.datetime, fill: bool = False) -> ScheduledSize | None:
    """The scheduled action whose sizes hold the group at ``now``: None before the window's scale-up."""
    past = [a for a in _block_actions(pool, fill) if a.at <= now]
    return past[-1] if past else None
