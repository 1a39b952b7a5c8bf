"""One billing model and one price lookup, read by the preview's cost table, the what-if's dollars and (through the
workers' previews) the fleet roll-up, so the same stack over the same hours costs the same everywhere. Pure.

What is billed when, by capacity type:

- on-demand, spot, flex-start: each node from the moment it is asked for (booting included) until it is gone,
  scale-down tails included, at its list price (flex-start from its own price list);
- reservation: every reserved node (``capacity.reservedNodes``, else maxNodes) for the whole time, whether it runs or
  not; nodes above the reservation are billed while up at the same rate (AWS ODCR and GCE reservations bill the
  reserved instances whether used or not: EC2 user guide "Capacity Reservation pricing and billing", Compute Engine
  "Reservations of Compute Engine zonal resources");
- capacity block (EC2 Capacity Blocks for ML): the upfront fee, paid for the whole window whether nodes run or not;
  per hour that is the fee over the window's hours (EC2 user guide "Capacity Blocks pricing and billing").

The price: a negotiated price from the policy pack's ``priceOverrides`` (most specific match wins) before the
catalog's list price; a capacity block is priced by its declared fee, never by an override or the on-demand list.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from catalog import CapacityType, Cloud
from stacks.plan.reservation import is_capacity_block, reserved_nodes

if TYPE_CHECKING:  # the policy pack reads match_override only: no planner at its import
    from stacks.plan.facts import PoolFacts
    from stacks.spec.stack import NodePool

CAPACITY_BLOCK = "capacity-block"
"""The billing kind of an EC2 Capacity Block (a reservation kind in the stack file)."""


@dataclass(frozen=True)
class Override:
    """A negotiated $/node-hour from ``priceOverrides`` (committed use, savings plan, contract)."""

    usd_per_node_hour: float
    as_of: dt.date | None
    source: str

    def describe(self) -> str:
        when = f" as of {self.as_of.isoformat()}" if self.as_of else ""
        return f"negotiated price{when} ({self.source})"


def match_override(
    overrides: Iterable[dict], machine_type: str, region: str | None, capacity: CapacityType
) -> Override | None:
    """The most specific entry (region and capacity each add one) for a machine type; the first of equals wins."""
    best, best_score = None, -1
    for o in overrides:
        if o.get("machineType") != machine_type:
            continue
        if o.get("region") not in (None, region) or o.get("capacity") not in (None, capacity.value):
            continue
        score = (o.get("region") is not None) + (o.get("capacity") is not None)
        if score > best_score:
            best, best_score = o, score
    if best is None:
        return None
    try:
        as_of = dt.date.fromisoformat(best["asOf"]) if best.get("asOf") else None
    except ValueError:
        as_of = None
    return Override(float(best["usdPerNodeHour"]), as_of, str(best.get("source", "")))


PACK_RULES_IN_TABLE_ORDER = ("cost-stack-budget", "cost-gpu-hour-limit")
"""The policy pack rules whose config holds priceOverrides, in the order a cost figure reads them (the budget rule
prices the stack as the cost table does)."""


def pack_config_overrides(config: object) -> list[dict]:
    """The priceOverrides of a parsed ``--policy-pack-config`` file (``{rule: {priceOverrides: [...]}}``), the budget
    rule's first; anything else in the file is the pack's to judge."""
    if not isinstance(config, dict):
        return []
    out: list[dict] = []
    for rule in PACK_RULES_IN_TABLE_ORDER:
        entry = config.get(rule)
        items = entry.get("priceOverrides") if isinstance(entry, dict) else None
        out += [o for o in items or [] if isinstance(o, dict)]
    return out


@dataclass(frozen=True)
class PoolBilling:
    """How one pool is billed: its rate and the nodes paid for whether they run or not."""

    pool: str
    kind: str
    """on-demand, spot, flex-start, reservation or capacity-block."""
    usd_per_node_hour: float | None
    """None: nobody knows the price (a reservation-bound machine without a public price and no override, or a
    capacity block without its fee or window); every $ figure of the pool is then unknown, never $0."""
    committed_nodes: int
    """Nodes billed for the whole time whether they run or not (reservations and capacity blocks); 0 otherwise."""
    label: str
    """Where the rate comes from, for tables."""
    as_of: dt.date | None
    overridden: bool = False
    list_usd_per_node_hour: float | None = None
    """The catalog's list rate when an override replaces it (for the note that says so)."""
    window_hours: float | None = None
    """A capacity block's window: its nodes exist and its fee is spread only over these hours (None elsewhere)."""

    def paid_hours(self, hours: float) -> float:
        """The hours of ``hours`` (from the window's start) that are billed for the committed nodes: a capacity
        block's fee covers its window and nothing after it; anything else is billed for all of them."""
        return hours if self.window_hours is None else min(hours, self.window_hours)


def paid_node_seconds(billed: Sequence[tuple[float, float]], committed: int, end_s: float) -> float:
    """Node-seconds paid over ``[0, end_s]`` given the stretches each node was billed while up (asked for to gone):
    the committed nodes for the whole span whether up or not, plus the nodes above them while up."""
    if not committed:
        return sum(min(b, end_s) - a for a, b in billed if a < end_s)
    return committed * end_s + above_committed(billed, committed, end_s)


def above_committed(billed: Sequence[tuple[float, float]], committed: int, end_s: float) -> float:
    """∫ max(0, nodes billed at t − committed) dt over [0, end_s] (a sweep over the interval ends)."""
    events = sorted(
        [(min(a, end_s), 1) for a, b in billed if a < end_s] + [(min(b, end_s), -1) for a, b in billed if a < end_s]
    )
    total, up, last = 0.0, 0, 0.0
    for t, step in events:
        total += max(0, up - committed) * (t - last)
        up, last = up + step, t
    return total


def billing_kind(pool: NodePool) -> str:
    return CAPACITY_BLOCK if is_capacity_block(pool) else pool.capacity.type.value


def pool_billing(f: PoolFacts, pool: NodePool, overrides: Iterable[dict] = ()) -> PoolBilling:
    """The one lookup: a capacity block's declared fee; else an override; else the catalog's list price."""
    kind = billing_kind(pool)
    committed = reserved_nodes(pool) or 0
    if kind == CAPACITY_BLOCK and f.cloud == Cloud.AWS:
        # lazy: the block's window and price load only for a capacity-block pool (the what-if/preview import floor)
        from stacks.plan.capacity_block import block_price, block_window

        block, window = block_price(f.cloud, pool, f.gpus_per_node), block_window(pool)
        if block is None or window is None:
            # the window is a fact of its own: a block without a declared fee still ends when its window does
            return PoolBilling(
                f.name,
                kind,
                None,
                committed,
                "unknown: capacity block without its fee or window",
                None,
                window_hours=window.hours if window is not None and window.hours > 0 else None,
            )
        return PoolBilling(
            f.name,
            kind,
            block.usd_per_node_hour,
            block.nodes,
            "capacity block fee (declared)",
            window.start.date(),
            window_hours=window.hours,
        )
    listed = f.price
    hit = match_override(overrides, f.machine.machine_type, f.region, pool.capacity.type)
    if hit is not None:
        return PoolBilling(
            f.name,
            kind,
            hit.usd_per_node_hour,
            committed,
            hit.describe(),
            hit.as_of,
            overridden=True,
            list_usd_per_node_hour=listed.usd_per_hour if listed is not None else None,
        )
    if listed is None:
        return PoolBilling(f.name, kind, None, committed, "unknown: reservation price not public", None)
    return PoolBilling(f.name, kind, listed.usd_per_hour, committed, listed.label, listed.as_of)


def billing_note(bill: PoolBilling, gpus_per_node: int) -> str:
    """What a pool's dollars are, in words a reader can recompute them from (every what-if format prints it)."""
    if bill.usd_per_node_hour is None:
        ends = (
            f"; its nodes still go when its {bill.window_hours:g}-h window ends"
            if bill.kind == CAPACITY_BLOCK and bill.window_hours is not None
            else ""
        )
        return f"{bill.pool} ({bill.kind}): price unknown ({bill.label}); its $ figures are unknown, never $0{ends}"
    rate = f"${bill.usd_per_node_hour:,.4f}/node-h (${bill.usd_per_node_hour / gpus_per_node:,.4f}/GPU-h)"
    when = f", as of {bill.as_of.isoformat()}" if bill.as_of and bill.kind != CAPACITY_BLOCK else ""
    if bill.kind == CAPACITY_BLOCK and bill.window_hours is not None:
        fee = bill.usd_per_node_hour * bill.committed_nodes * bill.window_hours
        return (
            f"{bill.pool} ({CAPACITY_BLOCK}): the declared fee ${fee:,.2f} over its {bill.window_hours:g}-h window "
            f"and {bill.committed_nodes} nodes = {rate}, paid for the run's hours inside the window whether nodes "
            f"run or not (all {bill.window_hours:g} h once the block has ended), never past it; the run starts at "
            f"the window's start"
        )
    if bill.kind == CapacityType.RESERVATION.value:
        return (
            f"{bill.pool} (reservation): {bill.committed_nodes} reserved nodes paid for the whole run whether up "
            f"or not, nodes above them while up, at {rate} ({bill.label}{when})"
        )
    spot = (
        "; AWS spot rows are the lowest price among the region's zones"
        if bill.kind == CapacityType.SPOT.value and bill.label.startswith("AWS spot")
        else ""
    )
    return (
        f"{bill.pool} ({bill.kind}): each node paid while up, from the moment it is asked for (booting "
        f"included) until it is gone (the scale-down tail after the last job included), at {rate} "
        f"({bill.label}{when}){spot}"
    )
