"""topology-compact-placement-size: a GKE compact-placement pool cannot grow past one placement group's size."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog
from policies.findings import Finding
from policies.pools import pool_view
from policies.resources import GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import dig

ID = "topology-compact-placement-size"
DEFAULT_MAX_NODES = 150
"""Conservative GKE compact placement size; newer GKE versions document more (raise maxNodes if yours does)."""


def check(resource: Resource, cfg: Config, cat: Catalog) -> Iterable[Finding]:
    view = pool_view(resource, cat)
    if view is None or dig(resource.props, "placementPolicy", "type") != "COMPACT":
        return
    limit = int(cfg["maxNodes"])
    if isinstance(view.max_nodes, int) and view.max_nodes > limit:
        yield Finding(
            view.subject,
            "the pool can grow past what one compact placement holds",
            observed=f"up to {view.max_nodes} nodes at max autoscale",
            required=f"at most {limit} nodes per compact-placement pool, from maxNodes",
            fix=f"split it into pools of at most {limit} nodes, or lower maxNodes",
            keys=view.keys,
        )


RULE = register(
    Rule(
        id=ID,
        title="Compact placement pools fit one placement group",
        category=Category.TOPOLOGY,
        description="A GKE pool with compact placement cannot be configured to grow past one compact placement group.",
        why=(
            "Nodes beyond the size of a compact placement group are never created: the autoscaler keeps asking and "
            "jobs wait for capacity that cannot arrive."
        ),
        remediation=(
            "1. Split the pool into several pools of at most maxNodes nodes (each gets its own placement). "
            "2. Or lower the pool's maxNodes. 3. If your GKE version documents larger groups, raise maxNodes "
            "in the policy pack config."
        ),
        severity=Severity.MEDIUM,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL,),
        check=check,
        reads_catalog=True,
        config={
            "maxNodes": {
                "type": "integer",
                "minimum": 1,
                "default": DEFAULT_MAX_NODES,
                "description": "Largest compact placement pool, in nodes.",
            }
        },
    ),
    order=2070,
)
