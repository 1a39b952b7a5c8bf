"""cost-stack-budget: the stack's $/hour with every pool at its autoscaler maximum, plus control-plane fees,
is within the budget. GPU pools without a price fail closed; CPU pools without one are named but not counted.

Control-plane fees are counted for the clusters the stack creates (an existing cluster is looked up, not a
resource here, and its fee is not caused by this stack). An EKS cluster is priced by its Kubernetes version's
support status on the catalog's price date, as the offline preview does (``Catalog.control_plane_fee``)."""

from __future__ import annotations

from typing import Any, Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from policies.findings import Finding, listing, money
from policies.pools import PoolView, pool_view
from policies.prices import PRICE_OVERRIDES_SCHEMA, block_unknown, host_quote, node_quote
from policies.resources import EKS_CLUSTER, EKS_NODE_GROUP, GKE_CLUSTER, GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import UNKNOWN

ID = "cost-stack-budget"
DEFAULT_MAX_USD_PER_HOUR = 10_000.0
"""A ceiling against a typo in maxNodes, not a budget: set your own per stack in the policy pack config."""
CLUSTER_TYPES = {GKE_CLUSTER: Cloud.GCP, EKS_CLUSTER: Cloud.AWS}


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    overrides = cfg["priceOverrides"]
    items: list[tuple[str, float]] = []
    pools: list[tuple[str, float]] = []
    unpriced_gpu: list[str] = []
    unpriced_cpu: list[str] = []
    for r in resources:
        if r.type in CLUSTER_TYPES:
            fee = _control_plane_fee(cat, CLUSTER_TYPES[r.type], r)
            items.append((f"control plane {r.name}", fee.usd_per_hour))
            continue
        view = pool_view(r, cat)
        if view is None:
            continue
        line, missing = _pool_cost(view, cat, overrides)
        if line is not None:
            items.append(line)
            pools.append((view.name, line[1]))
        elif view.is_gpu(cat):
            unpriced_gpu.append(f"{view.name} ({missing})")
        else:
            unpriced_cpu.append(f"{view.name} ({missing})")
    budget = float(cfg["maxUsdPerHour"])
    keys = ("stack",)
    if unpriced_gpu:
        yield Finding(
            "stack",
            "the budget cannot be checked",
            observed=f"unpriced GPU pools: {listing(list(dict.fromkeys(unpriced_gpu)))}",
            required="a known price and autoscaler maximum for every GPU pool (unknown is not $0), to "
            f"compare with the budget of {money(budget)}/hour",
            fix="give every GPU pool a known price and autoscaler maximum (catalog/data/prices.csv or "
            f"priceOverrides of {ID} in the policy pack config)",
            keys=keys,
        )
        return
    total = sum(cost for _, cost in items)
    if total <= budget:
        return
    items.sort(key=lambda item: (-item[1], item[0]))
    parts = [f"{label} = {money(cost)}" for label, cost in items]
    not_counted = f"; not counted (no price): {listing(unpriced_cpu)}" if unpriced_cpu else ""
    largest = [name for name, _ in sorted(pools, key=lambda p: (-p[1], p[0]))[:2]]
    yield Finding(
        "stack",
        "the hourly cost at max autoscale is over the budget",
        observed=f"{money(total)} per hour: {listing(parts, 5)}{not_counted}",
        required=f"at most {money(budget)}/hour, from maxUsdPerHour",
        fix=f"lower maxNodes of the largest pools ({', '.join(largest)}), use spot or negotiated prices "
        f"(priceOverrides), or have the platform team raise maxUsdPerHour of {ID} in the policy pack "
        "config",
        keys=keys,
    )


def _control_plane_fee(cat: Catalog, cloud: Cloud, cluster: Resource) -> Any:
    """EKS: by ``version`` (omitted: the provider default, a version in standard support; unknown until deploy:
    priced as extended support, the higher fee)."""
    if cloud != Cloud.AWS:
        return cat.control_plane_fee(cloud)
    version = cluster.props.get("version")
    if version is UNKNOWN:
        return cat.control_plane_extended[cloud]
    return cat.control_plane_fee(cloud, version if isinstance(version, str) and version else None)


def _pool_cost(view: PoolView, cat: Catalog, overrides: Any) -> tuple[tuple[str, float] | None, str]:
    """((label, $/hour at max), "") or (None, why it cannot be priced). A capacity block costs its declared fee over
    its window; a reservation bills every reserved node, so a pool counts max(maxNodes, reserved nodes)."""
    if view.capacity_block:
        hourly = view.block_usd_per_hour
        if hourly is None:
            return None, block_unknown(view)
        return (f"{view.name} capacity block {money(view.block_fee_usd or 0.0)} / {view.block_hours:g} h", hourly), ""
    if view.max_nodes is UNKNOWN or view.max_nodes is None:
        return None, "autoscaler maximum unknown"
    if view.is_gpu(cat):
        machine = view.machine(cat)
        quote = node_quote(cat, machine, view.region, view.capacity, overrides) if machine else None
    else:
        machine_type = view.machine_types[0] if view.machine_types else ""
        quote = host_quote(cat, view.cloud, machine_type, view.region, overrides)
    if quote is None:
        return None, f"no price for {', '.join(view.machine_types) or 'its machine type'}"
    nodes = max(view.max_nodes, view.reserved_nodes or 0)
    cost = quote.usd_per_node_hour * nodes
    return (f"{view.name} {nodes} × {money(quote.usd_per_node_hour)}", cost), ""


RULE = register(
    Rule(
        id=ID,
        title="Stack hourly budget at max autoscale",
        category=Category.COST,
        description="The stack's cost per hour with every pool at its autoscaler maximum, control-plane fees "
        "included, is within the budget.",
        why=(
            "Autoscaler maximums are promises the cloud will keep: a pool that may grow to 96 nodes will, under "
            "load, bill for 96. Summing every pool at its maximum, plus the per-cluster fee, bounds the bill "
            "before anything is deployed."
        ),
        remediation=(
            "1. Read the total and the largest items in the message. 2. Lower maxNodes of the largest "
            "pools, or move them to spot or a negotiated price (priceOverrides). 3. Or have the platform "
            "team raise maxUsdPerHour for this stack in the policy pack config."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP, GKE_CLUSTER, EKS_CLUSTER),
        check=check,
        reads_catalog=True,
        stack=True,
        config={
            "maxUsdPerHour": {
                "type": "number",
                "minimum": 0,
                "default": DEFAULT_MAX_USD_PER_HOUR,
                "description": "Budget in USD per hour for the whole stack at max autoscale.",
            },
            "priceOverrides": PRICE_OVERRIDES_SCHEMA,
        },
    ),
    order=1020,
)
