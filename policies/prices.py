"""Prices for cost rules: the catalog's dated list prices, or a negotiated price from the pack config.

An override names a machine type and, optionally, a region and a capacity type; the most specific match wins.
No match and no catalog price means the price is unknown, and cost rules fail closed on that.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Iterable

from catalog import CapacityType, Catalog, Cloud, MachineType
from stacks.plan.billing import match_override

CAPACITY_VALUES = [c.value for c in CapacityType]

PRICE_OVERRIDES_SCHEMA: dict[str, Any] = {
    "type": "array",
    "default": [],
    "description": (
        "Negotiated prices that replace catalog list prices: `machineType`, optional `region` and "
        "`capacity` (on-demand, spot, reservation, flex-start), `usdPerNodeHour`, `asOf` (YYYY-MM-DD) and "
        "`source` (contract or quote). The most specific match wins."
    ),
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["machineType", "usdPerNodeHour", "asOf", "source"],
        "properties": {
            "machineType": {"type": "string", "minLength": 1},
            "region": {"type": "string", "minLength": 1},
            "capacity": {"type": "string", "enum": CAPACITY_VALUES},
            "usdPerNodeHour": {"type": "number", "minimum": 0.01},
            "asOf": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
            "source": {"type": "string", "minLength": 3},
        },
    },
}


@dataclass(frozen=True)
class Quote:
    usd_per_node_hour: float
    as_of: dt.date | None
    source: str
    overridden: bool

    def describe(self) -> str:
        """``catalog price as of 2026-07-30`` / ``negotiated price as of 2026-01-01 (MSA 2026)``."""
        when = f" as of {self.as_of.isoformat()}" if self.as_of else ""
        return f"negotiated price{when} ({self.source})" if self.overridden else f"catalog price{when}"


def _override(overrides: Iterable[dict], machine_type: str, region: str | None, capacity: CapacityType) -> Quote | None:
    # the one lookup the preview's cost table and the what-if share (stacks/plan/billing.py)
    hit = match_override(overrides, machine_type, region, capacity)
    return None if hit is None else Quote(hit.usd_per_node_hour, hit.as_of, hit.source, overridden=True)


def matching_override(
    overrides: Iterable[dict], machine_type: str, region: str | None, capacity: CapacityType
) -> Quote | None:
    """The most specific override for a machine type, region and capacity type, or None."""
    return _override(overrides, machine_type, region, capacity)


def node_quote(
    cat: Catalog, machine: MachineType, region: str | None, capacity: CapacityType, overrides: Iterable[dict]
) -> Quote | None:
    """$/node-hour for a GPU machine in a region and capacity type; None when nobody knows it."""
    hit = _override(overrides, machine.machine_type, region, capacity)
    if hit is not None:
        return hit
    price = cat.node_price(machine, region, capacity) if region else None
    return Quote(price.usd_per_hour, price.as_of, price.label, overridden=False) if price else None


def host_quote(
    cat: Catalog, cloud: Cloud, machine_type: str, region: str | None, overrides: Iterable[dict]
) -> Quote | None:
    """$/node-hour for a CPU machine (system pools), on-demand."""
    hit = _override(overrides, machine_type, region, CapacityType.ON_DEMAND)
    if hit is not None:
        return hit
    price = cat.host_price(cloud, machine_type, region) if region else None
    return Quote(price.usd_per_hour, price.as_of, price.label, overridden=False) if price else None


def override_example(machine_type: str, region: str | None, capacity: CapacityType) -> str:
    """The JSON a user pastes into priceOverrides, for fix messages."""
    where = f'"region": "{region}", ' if region else ""
    return (
        f'{{"machineType": "{machine_type}", {where}"capacity": "{capacity.value}", "usdPerNodeHour": <price>, '
        f'"asOf": "<YYYY-MM-DD>", "source": "<contract or quote>"}}'
    )


def block_unknown(view: Any) -> str:
    """Why a capacity block (a ``PoolView``) has no price: what the stack config did not declare."""
    missing = [
        key for key, value in (("upfront fee", view.block_fee_usd), ("window", view.block_hours)) if value is None
    ]
    return f"capacity block without a declared {' and '.join(missing)} (capacity.upfrontFeeUsd, capacity.window)"
