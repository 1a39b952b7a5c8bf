"""The conventions behind each cost figure, said in the notes of the pools they affect. Pure: no Pulumi.

Each pool's ``PoolCost.notes`` names the conventions its figures rest on; the stack's notes say each convention once
and list the pools it touches. What the preview does not price at all (boot disks, Cloud NAT) is named too, in the
notes and in the JSON totals (``notCounted``), so no total reads as more complete than it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol, Sequence

from catalog import Catalog, CapacityType, Cloud
from stacks.plan.facts import PoolFacts
from stacks.spec.cluster import ClusterMode
from stacks.spec.stack import StackSpec


class PricedPool(Protocol):
    """What the conventions read of a pool's cost line (``preview.cost.PoolCost``)."""

    @property
    def pool(self) -> str: ...

    @property
    def capacity(self) -> str: ...

    @property
    def priced(self) -> bool: ...


DEFAULT_MAX_RUN_HOURS = 168  # GKE's maxRunDuration cap for flex-start nodes (stacks.spec.stack: max_run_hours)
AWS_SPOT_MIN = re.compile(r"spot_min = min across AZs \(avg (?P<avg>[\d.]+), max (?P<max>[\d.]+)\)")
SKYPILOT_DATE_NOTE = (
    "the SkyPilot v9 catalog snapshot is undated; its date is an inferred lower bound (matching "
    "weekly price snapshots date it no earlier)"
)


MONTH_NOTE = "a month is 730 hours (8,760 h / 12, as the cloud price lists count it): $/month max = $/h max × 730"


def pool_notes(f: PoolFacts, spec: StackSpec, cat: Catalog, capacity: str, priced: bool) -> list[tuple[str, str]]:
    """(convention key, the note for this pool), in the order the stack notes list them."""
    out: list[tuple[str, str]] = []
    if priced and capacity != "capacity-block":
        out.append(("month", "$/month max = $/h max × 730 h"))
    if capacity == "capacity-block" and priced:
        out.append(
            (
                "block",
                "the upfront fee spread evenly over the block's window: $/h is fee ÷ window hours, "
                "$/month max is at most 730 h of that; the whole fee is billed at purchase",
            )
        )
    price = f.price
    if price is not None and f.cloud == Cloud.AWS and capacity == CapacityType.SPOT.value:
        m = AWS_SPOT_MIN.search(price.source)
        if m:
            out.append(
                (
                    "aws-spot",
                    f"AWS spot = the cheapest AZ in {spec.region} on {price.as_of.isoformat()} "
                    f"(${price.usd_per_hour:,.4f}/h; AZ average ${float(m['avg']):,.4f}, dearest "
                    f"${float(m['max']):,.4f})",
                )
            )
        elif "spot_avg" in price.source:
            out.append(
                (
                    "aws-spot-avg",
                    f"AWS spot = the average over {spec.region}'s AZs on "
                    f"{price.as_of.isoformat()} (the source has no per-AZ minimum)",
                )
            )
    if price is not None and capacity == CapacityType.FLEX_START.value:
        pool = next(p for p in spec.node_pools if p.name == f.name)
        hours = pool.capacity.max_run_hours or DEFAULT_MAX_RUN_HOURS
        listed = cat.node_price(f.machine, spec.region, CapacityType.ON_DEMAND)
        age = (
            (
                f" ({(listed.as_of - price.as_of).days} days older than the on-demand list price of "
                f"{listed.as_of.isoformat()})"
            )
            if listed is not None and listed.as_of > price.as_of
            else ""
        )
        out.append(
            (
                "flex",
                f"flex-start price from {price.label}, as of {price.as_of.isoformat()}{age}; each node "
                f"lives at most maxRunHours = {hours} h, then GKE deletes it",
            )
        )
    if price is not None and "SkyPilot" in price.label:
        out.append(("skypilot", f"price date {price.as_of.isoformat()} is an inferred lower bound (SkyPilot v9)"))
    zones = cat.offered_zones(f.cloud, f.machine)
    if zones is not None and "skypilot" in zones.source.lower():
        out.append(
            (
                "skypilot-zones",
                f"zone availability from SkyPilot v9, as of ≥ {zones.as_of.isoformat()} (an inferred lower bound)",
            )
        )
    return out


STACK_NOTE = {
    "month": lambda pools: f"{MONTH_NOTE}: {pools}",
    "block": lambda pools: (
        f"capacity blocks ({pools}): the upfront fee is spread evenly over the block's window, "
        "so $/h is the same at min and max and $/month max is at most 730 h of it; the whole fee "
        "is billed at purchase, not monthly"
    ),
    "aws-spot": lambda pools: (
        f"AWS spot prices are the cheapest AZ of the region at the snapshot ({pools}); the AZ "
        "average is higher, and a pool pinned to other AZs pays more"
    ),
    "aws-spot-avg": lambda pools: (
        f"AWS spot prices are the average over the region's AZs ({pools}): the source had no per-AZ minimum"
    ),
    "flex": lambda pools: (
        f"flex-start pools ({pools}) are priced from a separate, older source, and their nodes are temporary"
    ),
    "skypilot": lambda pools: f"prices from the SkyPilot v9 catalog ({pools}): {SKYPILOT_DATE_NOTE}",
    "skypilot-zones": lambda pools: f"zone availability from the SkyPilot v9 catalog ({pools}): {SKYPILOT_DATE_NOTE}",
}
"""One stack note per convention, naming the pools it affects."""
DETAILED = ("aws-spot", "flex")
"""Conventions whose figures differ per pool: each pool's own note follows the stack note."""


def not_counted(spec: StackSpec) -> list[str]:
    """Items the stack pays for that no figure includes."""
    sizes = [f"{p.name} {p.disk_size_gib} GiB" for p in spec.node_pools]
    system = "the system pool's at the provider's default size" if spec.cluster.mode == ClusterMode.CREATE else ""
    disks = "; ".join(x for x in (", ".join(sizes), system) if x)
    out = [f"boot disks (per node: {disks}; billed per GiB-month on top of the node price)"] if disks else []
    if spec.cloud == Cloud.GCP and spec.cluster.mode == ClusterMode.CREATE and _creates_cloud_nat(spec):
        out.append("Cloud NAT (per gateway-hour and per GB processed)")
    return out


def _creates_cloud_nat(spec: StackSpec) -> bool:
    """As components/gke/cluster.py: ``cloudNat`` when set, else a NAT exactly when the stack uses the default
    network."""
    nat = spec.cluster.cloud_nat
    return nat if nat is not None else spec.cluster.network is None


@dataclass
class Conventions:
    pool_notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Pool -> the conventions its figures rest on."""
    stack: list[str] = field(default_factory=list)
    """One note per convention, naming its pools (and each pool's own figures where they differ)."""
    not_counted: list[str] = field(default_factory=list)


def conventions(pools: Sequence[PricedPool], spec: StackSpec, facts: list[PoolFacts], cat: Catalog) -> Conventions:
    """Each pool's conventions and one stack-level note per convention, naming its pools."""
    by_name = {f.name: f for f in facts}
    out = Conventions()
    touched: dict[str, list[str]] = {}
    keyed: dict[str, list[tuple[str, str]]] = {}
    for p in pools:
        f = by_name.get(p.pool)
        notes = pool_notes(f, spec, cat, p.capacity, p.priced) if f is not None else []
        keyed[p.pool] = notes
        for key, _ in notes:
            touched.setdefault(key, []).append(p.pool)
        out.pool_notes[p.pool] = tuple(n for _, n in notes)
    for key, make in STACK_NOTE.items():
        if key in touched:
            out.stack.append(make(", ".join(touched[key])))
            if key in DETAILED:
                out.stack += [f"{p.pool}: {n}" for p in pools for k, n in keyed[p.pool] if k == key]
    out.not_counted = not_counted(spec)
    if out.not_counted:
        out.stack.append("not counted: " + "; ".join(out.not_counted))
    return out
