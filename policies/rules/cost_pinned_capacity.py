"""cost-pinned-capacity (advisory): an autoscaled GPU pool's cost at idle is at most a share of its cost at max.

What runs at idle: the autoscaler minimum, raised by a Slurm NodeSet's slurmd pods on the pool (Slinky ``replicas``:
every pod holds a node). The price per node cancels out, so the share is nodes at idle / maxNodes. Fixed-size pools
(min = max, no range to scale in) and reserved or capacity-block pools (billed whether nodes run or not) are out of
scope: their floor is a decision, not a side effect.
"""

from __future__ import annotations

from typing import Any, Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import CapacityType, Catalog
from policies.findings import Finding
from policies.pools import PoolView, gpu_pools
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL, HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import is_slurm_release, nodesets, selected_pool
from policies.values import as_int, dig

ID = "cost-pinned-capacity"
DEFAULT_MAX_IDLE_SHARE = 0.5


def _autoscaler_min(view: PoolView) -> Any:
    p = view.resource.props
    if view.resource.type == EKS_NODE_GROUP:
        return as_int(dig(p, "scalingConfig", "minSize"))
    total = as_int(dig(p, "autoscaling", "totalMinNodeCount"))
    if total is not None:
        return total
    per_zone = as_int(dig(p, "autoscaling", "minNodeCount"))
    zones = len(view.zones) if isinstance(view.zones, tuple) and view.zones else 1
    return per_zone * zones if isinstance(per_zone, int) else per_zone


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    held: dict[str, tuple[int, str]] = {}
    for r in (r for r in resources if is_slurm_release(r)):
        for ns in nodesets(r):
            pool = selected_pool(ns.selector)
            if pool is not None and isinstance(ns.replicas, int):
                held[pool] = (ns.replicas, ns.name)
    limit = float(cfg["maxIdleShare"])
    for view in gpu_pools(resources, cat):
        low, high = _autoscaler_min(view), view.max_nodes
        if (
            not (isinstance(low, int) and isinstance(high, int))
            or low >= high
            or view.capacity_block
            or view.capacity == CapacityType.RESERVATION
            or view.reserved_nodes
        ):
            continue
        pods, nodeset = held.get(view.name, (0, ""))
        idle = min(high, max(low, pods))
        if idle / high <= limit:
            continue
        why = (
            f"Slurm NodeSet '{nodeset}' runs {pods} slurmd pods on it"
            if pods > low
            else f"the autoscaler minimum is {low}"
        )
        yield Finding(
            view.subject,
            "the pool's cost at idle is most of its cost at max (pinned capacity)",
            observed=f"{idle} of {high} nodes run when no job does ({idle / high:.0%}): {why}",
            required=f"at most {limit:.0%} of maxNodes at idle, from maxIdleShare",
            fix="with workload slurm keep slurm.scaling on (the NodeSet then starts at minNodes and follows "
            "the queue); otherwise lower minNodes, or waive the rule for a pool kept warm on purpose",
            keys=(*view.keys, nodeset) if nodeset else view.keys,
        )


RULE = register(
    Rule(
        id=ID,
        title="No pinned GPU capacity",
        category=Category.COST,
        description="An autoscaled GPU pool's cost at idle is at most maxIdleShare of its cost at max.",
        why=(
            "Idle GPU nodes are the largest avoidable cost of a GPU cluster. A pool with an autoscaling range whose "
            "floor is near its maximum - a high minimum, or scheduler pods that hold every node, as Slurm NodeSets "
            "with replicas = maxNodes do - pays for its range without using it."
        ),
        remediation=(
            "1. Read the pool, its nodes at idle and what holds them in the message. 2. With workload slurm, "
            "leave scheduling.slurm.scaling.enabled on so the NodeSet follows the queue. 3. Otherwise lower "
            "minNodes. 4. A pool kept warm on purpose (latency-critical inference) gets a waiver with the "
            "reason."
        ),
        severity=Severity.LOW,
        enforcement=EnforcementLevel.ADVISORY,
        applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP, HELM_RELEASE),
        check=check,
        reads_catalog=True,
        stack=True,
        config={
            "maxIdleShare": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "default": DEFAULT_MAX_IDLE_SHARE,
                "description": "Largest share of maxNodes an autoscaled pool may run at idle.",
            }
        },
    ),
    order=1040,
)
