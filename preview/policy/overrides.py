"""Which pool prices the policy pack's ``priceOverrides`` replace (committed-use, savings-plan or other negotiated
prices): the cost table shows catalog list prices, and the cost rules judge the overridden ones, so the preview
says where the two differ."""
from __future__ import annotations

from typing import Any

from catalog import CapacityType
from policies.prices import matching_override

PRICED_RULES = ("cost-gpu-hour-limit", "cost-stack-budget")
"""The rules whose config holds priceOverrides."""


def overrides_in(config: dict[str, Any]) -> dict[str, list[dict]]:
    """``{rule: priceOverrides}`` of the reconciled pack config (``PolicyConfig`` per rule)."""
    return {rule: list(config[rule].properties.get("priceOverrides") or []) for rule in PRICED_RULES if rule in config}


def override_notes(cost: Any, region: str | None, by_rule: dict[str, list[dict]]) -> list[str]:
    """One note per pool whose price an override replaces, naming the rules, the override and the list price.
    Capacity blocks are priced by their declared fee, never by an override."""
    notes = []
    for p in cost.pools:
        if p.capacity == "capacity-block" or p.usd_per_node_hour is None:
            continue
        hits = {rule: matching_override(items, p.machine_type, region, CapacityType(p.capacity))
                for rule, items in by_rule.items()}
        found = {rule: q for rule, q in hits.items() if q is not None}
        if not found:
            continue
        parts = [f"{rule}: ${q.usd_per_node_hour:,.2f}/node-h, {q.describe()}" for rule, q in found.items()]
        notes.append(f"price of {p.pool} is overridden in the policy pack config ({'; '.join(parts)}) instead of the "
                     f"list ${p.usd_per_node_hour:,.2f}/node-h shown in the table")
    return notes
