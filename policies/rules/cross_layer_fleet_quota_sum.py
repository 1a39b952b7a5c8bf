"""cross-layer-fleet-quota-sum: the manager's quota per queue and GPU model equals the sum of the workers' quotas."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.fleet import fleet_of, queue_namespace, queue_quotas, slug
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.scheduler_objects import object_name

ID = "cross-layer-fleet-quota-sum"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    for cq in fleet.queues:
        name = object_name(cq)
        ns = queue_namespace(fleet, cq)
        for model, gpus in queue_quotas(cq).items():
            parts = {
                w.name: sum(
                    int(g)
                    for q in w.facts.get("queues", [])
                    if isinstance(q, dict) and q.get("name") == name and q.get("namespace") == ns
                    for m, g in (q.get("gpus") or {}).items()
                    if slug(m) == model
                )
                for w in fleet.workers
            }
            total = sum(parts.values())
            if total == 0 or gpus == total:
                continue  # total 0: cross-layer-fleet-quota-placeable reports it
            effect = (
                "the workers' quota is larger, so part of it stays idle: the manager never dispatches more "
                "than its own quota"
                if gpus < total
                else "the manager admits more than the workers can, so "
                "dispatched jobs wait on the workers while holding manager quota"
            )
            shown = " + ".join(f"{n} {g}" for n, g in parts.items())
            yield Finding(
                f"queue '{name}'",
                f"manager quota for {model} differs from the workers' sum: {effect}",
                observed=f"manager {gpus} {model} GPUs; workers {shown} = {total}",
                required=f"{total} (the sum of the workers' nominal quotas, Kueue's MultiKueue guidance)",
                fix=f"set fleet.queues '{name}' quota for this model to {total}",
                keys=(name, cq.name, cq.urn),
                urn=cq.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Fleet quota matches the workers",
        category=Category.CROSS_LAYER,
        description="A fleet queue's manager quota per GPU model equals the sum of its workers' quotas.",
        why=(
            "Kueue's MultiKueue docs: the manager's ClusterQueue quota should be about the sum of the worker quotas; "
            "lower leaves workers idle, higher dispatches workloads the workers will not admit soon."
        ),
        remediation="1. Set the manager queue's quota per GPU model to the sum of the workers' nominal quotas.",
        severity=Severity.LOW,
        enforcement=EnforcementLevel.ADVISORY,
        applies_to=(f"{KUEUE_ANY}ClusterQueue", f"{KUEUE_ANY}MultiKueueCluster"),
        check=check,
        stack=True,
    ),
    order=3170,
)
