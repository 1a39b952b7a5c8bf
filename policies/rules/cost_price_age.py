"""cost-price-age: the price each GPU pool is judged by is not older than a configured age (advisory)."""

from __future__ import annotations

import datetime as dt
from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import CapacityType, Catalog
from policies.findings import Finding
from policies.pools import pool_view
from policies.prices import PRICE_OVERRIDES_SCHEMA, node_quote
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register

ID = "cost-price-age"
DEFAULT_MAX_AGE_DAYS = 180


def evaluation_date(cfg: Config) -> dt.date:
    """``evaluationDate`` when set (reproducible CI), else today."""
    given = cfg.get("evaluationDate") or ""
    return dt.date.fromisoformat(given) if given else dt.date.today()


def check(resource: Resource, cfg: Config, cat: Catalog) -> Iterable[Finding]:
    view = pool_view(resource, cat)
    if view is None or not view.is_gpu(cat):
        return
    today, max_age = evaluation_date(cfg), int(cfg["maxPriceAgeDays"])
    for machine_type in view.machine_types:
        machine = view.machine(cat, machine_type)
        quote = node_quote(cat, machine, view.region, view.capacity, cfg["priceOverrides"]) if machine else None
        if quote is None or quote.as_of is None:
            continue  # unknown prices are cost-gpu-hour-limit's (mandatory) finding
        age = (today - quote.as_of).days
        if age > max_age:
            where = (
                "priceOverrides"
                if quote.overridden
                else f"catalog/data/{'flex-start-prices.csv' if view.capacity == CapacityType.FLEX_START else 'prices.csv'}"
            )
            yield Finding(
                view.subject,
                "the price is old, so cost checks may be off",
                observed=f"the {machine_type} {view.capacity.value} price in {view.region} is {age} days "
                f"old ({quote.describe()})",
                required=f"at most {max_age} days on {today.isoformat()}, from maxPriceAgeDays",
                fix=f"refresh the price in {where} from the provider's current price list (with its date and source)",
                keys=view.keys,
            )


RULE = register(
    Rule(
        id=ID,
        title="Prices are current",
        category=Category.COST,
        description="The price each GPU pool is judged by is not older than the configured age.",
        why=(
            "Spot prices move daily and list prices change a few times a year; a cost check against a two-year-old "
            "snapshot can pass a pool that now costs far more. This is advisory: an old price is still a price."
        ),
        remediation=(
            "1. Look up the current price for the machine type, region and capacity type in the message. "
            "2. Update its row in catalog/data/prices.csv (usd_per_hour, as_of, source), or the asOf of the "
            "matching priceOverrides entry. 3. Or raise maxPriceAgeDays in the policy pack config."
        ),
        severity=Severity.LOW,
        enforcement=EnforcementLevel.ADVISORY,
        applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP),
        check=check,
        reads_catalog=True,
        config={
            "maxPriceAgeDays": {
                "type": "integer",
                "minimum": 1,
                "default": DEFAULT_MAX_AGE_DAYS,
                "description": "Oldest acceptable price, in days before the evaluation date.",
            },
            "evaluationDate": {
                "type": "string",
                "default": "",
                "pattern": "^([0-9]{4}-[0-9]{2}-[0-9]{2})?$",
                "description": "Judge ages as of this date (YYYY-MM-DD) for reproducible CI; empty: today.",
            },
            "priceOverrides": PRICE_OVERRIDES_SCHEMA,
        },
    ),
    order=1030,
)
