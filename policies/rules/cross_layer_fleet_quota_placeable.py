"""cross-layer-fleet-quota-placeable: manager quota for a GPU model in a queue only where some worker can admit it."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.fleet import fleet_of, manager_quotas, slug
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule

ID = "cross-layer-fleet-quota-placeable"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    for cq, name, ns, model, gpus in manager_quotas(fleet):
        able = [
            w.name
            for w in fleet.workers
            for q in w.facts.get("queues", [])
            if isinstance(q, dict)
            and q.get("name") == name
            and q.get("namespace") == ns
            and any(slug(m) == model and g > 0 for m, g in (q.get("gpus") or {}).items())
        ]
        if not able:
            yield Finding(
                f"queue '{name}'",
                f"the manager admits {model} jobs no worker can ever admit: no "
                "worker has quota for this GPU model in its mirrored queue, so they wait forever",
                observed=f"manager quota {gpus} {model} GPUs; workers with {model} quota in '{name}': none",
                required=f"at least one worker with {model} quota in queue '{name}' ({ns})",
                fix=f"remove the {model} quota from fleet.queues '{name}', or give a worker's queue "
                f"'{name}' quota in a pool of that model",
                keys=(name, cq.name, cq.urn),
                urn=cq.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Fleet quota only where a worker can run it",
        category=Category.CROSS_LAYER,
        description="Each GPU model a fleet queue has quota for on the manager has quota in that queue on some worker.",
        why=(
            "The manager reserves quota and dispatches; when no worker's Kueue can ever admit the shape (no quota "
            "for the GPU model in the mirrored queue) the job holds manager quota and never runs."
        ),
        remediation=(
            "1. Give the queue quota in a pool of that model on a worker, or 2. drop the model from the "
            "manager's queue."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}ClusterQueue", f"{KUEUE_ANY}MultiKueueCluster"),
        check=check,
        stack=True,
    ),
    order=3160,
)
