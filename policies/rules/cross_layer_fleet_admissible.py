"""cross-layer-fleet-admissible: a fleet job dispatched to a worker with quota for its GPU model is one that worker's
Kueue can admit (the ported flavor assigner, ``stacks/plan/fleet_admission.py``, on the facts the worker exports)."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.fleet import fleet_of, manager_quotas, slug
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from stacks.plan.fleet_admission import fleet_verdict, quota_for

ID = "cross-layer-fleet-admissible"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    for _, name, ns, model_slug, _ in manager_quotas(fleet):
        for w in fleet.workers:
            model = next(
                (
                    str(g.get("model"))
                    for g in w.facts.get("gpus") or []
                    if isinstance(g, dict) and slug(str(g.get("model"))) == model_slug
                ),
                None,
            )
            if model is None or quota_for(w.facts, name, ns, model) <= 0 or "admission" not in w.facts:
                continue  # no quota there: cross-layer-fleet-quota-placeable judges the fleet as a whole
            v = fleet_verdict(w.name, w.facts, name, model)
            if v.admissible or v.assignment is None:
                continue  # None: no such queue there (cross-layer-fleet-queues-mirrored says so)
            yield Finding(
                f"worker '{w.name}' queue '{name}'",
                f"Kueue on the worker never admits a {model} fleet job (runtime {v.runtime}): "
                f"{v.rule}, so the job holds manager quota and never runs there",
                observed=f"flavor {v.flavor}: {v.reason}",
                required=f"a flavor of queue '{name}' on '{w.name}' that admits runtime {v.runtime}",
                fix="make the worker's flavors and the fleet runtime agree on topology (docs/fleet.md: "
                "fleet workers run without scheduling.topology), or remove the worker's "
                f"{model} quota from queue '{name}'",
                keys=(w.name, name, w.resource.name, w.resource.urn),
                urn=w.resource.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Fleet jobs are admissible on the workers that have quota for them",
        category=Category.CROSS_LAYER,
        description=(
            "Each fleet runtime, submitted to a worker's mirrored queue that has quota for its GPU model, is "
            "admitted by Kueue v0.19.2's flavor assignment (TAS-only flavors, taints, node labels, quota)."
        ),
        why=(
            "Kueue skips a TAS flavor for a PodSet without a topology request in a queue that is not TAS-only "
            "(tas_flavorassigner.go): such a job is dispatched, holds manager quota and is never admitted."
        ),
        remediation=(
            "1. Drop scheduling.topology on fleet workers (non-TAS flavors), or 2. remove the worker's quota "
            "for that GPU model from the fleet queue."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}ClusterQueue", f"{KUEUE_ANY}MultiKueueCluster"),
        check=check,
        stack=True,
    ),
    order=3165,
)
