"""cross-layer-kueue-quota: Kueue nominal GPU quota on a pool's flavor is at most the pool's GPUs at max nodes."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog
from policies.findings import Finding, listing
from policies.multinode import partitioned
from policies.pools import gpu_pools
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import flavor_quotas, kueue_kind, object_name, selected_pool
from policies.values import as_dict, dig

ID = "cross-layer-kueue-quota"


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    pools = {p.name: p for p in gpu_pools(resources, cat)}
    quotas = flavor_quotas(resources)
    for r in resources:
        if kueue_kind(r) != "ResourceFlavor":
            continue
        flavor = object_name(r)
        pool = pools.get(selected_pool(as_dict(dig(r.props, "spec", "nodeLabels"))) or "")
        if pool is None or flavor not in quotas or partitioned(pool) or not isinstance(pool.max_nodes, int):
            continue  # unknown pool is cross-layer-pool-exists' finding; shared GPUs advertise more than physical
        machine = pool.machine(cat)
        if machine is None:
            continue
        capacity = machine.gpus * pool.max_nodes
        total = sum(q for _, q in quotas[flavor])
        if total > capacity:
            parts = [f"{cq} {q:g}" for cq, q in sorted(quotas[flavor])]
            yield Finding(
                f"Kueue ResourceFlavor '{flavor}'",
                f"ClusterQueues promise more nvidia.com/gpu on pool '{pool.name}' than it can ever have",
                observed=f"{total:g} GPUs of nominalQuota ({listing(parts)})",
                required=f"at most {capacity} = {pool.max_nodes} nodes × {machine.gpus} GPUs at max autoscale",
                fix=f"lower the nominalQuota of {flavor} in the queues, or raise the pool's maxNodes",
                keys=(flavor, pool.name, r.name, r.urn),
                urn=r.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Kueue quota fits the pool",
        category=Category.CROSS_LAYER,
        description="The nominal nvidia.com/gpu quota all ClusterQueues give a pool's ResourceFlavor is at most the "
        "pool's GPUs at max nodes.",
        why=(
            "Kueue does not compare quota with capacity (kueue#2665): a queue promised more GPUs than the pool can "
            "grow to admits jobs that then wait for nodes that never come, and fair sharing is computed on numbers "
            "that do not exist. Pools that share or partition GPUs (MIG, time-slicing) advertise more than physical "
            "GPUs and are skipped."
        ),
        remediation=(
            "1. Lower nominalQuota of the flavor across the ClusterQueues (borrowing covers bursts). 2. Or "
            "raise the pool's maxNodes (and check cost-stack-budget)."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=("kubernetes:kueue.x-k8s.io/*:ResourceFlavor", "kubernetes:kueue.x-k8s.io/*:ClusterQueue"),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3030,
)
