"""Which pool prices the policy pack's ``priceOverrides`` replace (committed-use, savings-plan or other negotiated
prices): the cost table, the cost rules and the what-if price a pool by the same lookup (``stacks/plan/billing.py``),
and the preview says which prices an override replaced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalog import CapacityType
from policies.prices import matching_override
from stacks.plan.billing import PACK_RULES_IN_TABLE_ORDER

PRICED_RULES = ("cost-gpu-hour-limit", "cost-stack-budget")
"""The rules whose config holds priceOverrides."""
TABLE_ORDER = PACK_RULES_IN_TABLE_ORDER
"""Whose overrides the cost table reads first (the budget rule prices the stack as the table does)."""


def overrides_in(config: dict[str, Any]) -> dict[str, list[dict]]:
    """``{rule: priceOverrides}`` of the reconciled pack config (``PolicyConfig`` per rule)."""
    return {rule: list(config[rule].properties.get("priceOverrides") or []) for rule in PRICED_RULES if rule in config}


def configured_overrides(config_file: Path | None) -> list[dict]:
    """The priceOverrides the cost table uses, from ``--policy-pack-config``: cost-stack-budget's (the stack's own
    cost) before cost-gpu-hour-limit's, the most specific match winning (``stacks/plan/billing.py``). An unreadable
    file gives none here: the policy check reports it (exit 2)."""
    if config_file is None:
        return []
    from preview.policy.config import PolicyConfigError, load_config_file

    try:
        given = load_config_file(config_file)
    except PolicyConfigError:
        return []
    out: list[dict] = []
    for rule in TABLE_ORDER:
        if rule in given:
            out += [o for o in given[rule].properties.get("priceOverrides") or [] if isinstance(o, dict)]
    return out


def override_notes(cost: Any, region: str | None, by_rule: dict[str, list[dict]]) -> list[str]:
    """One note per pool whose price an override replaces, naming the rules, the override and the list price; and
    where a rule judges a price other than the table's (the rules' overrides differ). Capacity blocks are priced by
    their declared fee, never by an override."""
    notes = []
    for p in cost.pools:
        if p.capacity == "capacity-block" or p.usd_per_node_hour is None:
            continue
        hits = {
            rule: matching_override(items, p.machine_type, region, CapacityType(p.capacity))
            for rule, items in by_rule.items()
        }
        found = {rule: q for rule, q in hits.items() if q is not None}
        listed = p.list_usd_per_node_hour
        if not found and listed is None:
            continue
        parts = [f"{rule}: ${q.usd_per_node_hour:,.2f}/node-h, {q.describe()}" for rule, q in found.items()]
        was = f"the list ${listed:,.2f}/node-h" if listed is not None else "the catalog list price"
        notes.append(
            f"price of {p.pool} is overridden in the policy pack config ({'; '.join(parts) or p.price_source}"
            f"): the table shows ${p.usd_per_node_hour:,.2f}/node-h instead of {was}"
        )
        other = [rule for rule, q in found.items() if abs(q.usd_per_node_hour - p.usd_per_node_hour) > 1e-9]
        if other:
            notes.append(
                f"{', '.join(other)} judge{'s' if len(other) == 1 else ''} {p.pool} at another price than "
                "the table's: give the same priceOverrides entry to both cost rules"
            )
    return notes
