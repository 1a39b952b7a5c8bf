"""cross-layer-fleet-cohort-limits: the manager's cohort lets a fleet queue borrow and lend no more than its workers'
Kueues do (``borrowingLimit`` / ``lendingLimit`` per GPU model = the sums of the workers')."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.fleet import fleet_of, queue_namespace, queue_quotas
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.scheduler_objects import object_name
from policies.values import as_dict, as_list, dig
from stacks.plan.fleet import cohort_limits

ID = "cross-layer-fleet-cohort-limits"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"
UNLIMITED = "no limit"


def _limits(cq: Resource) -> dict[str, dict[str, int]]:
    """Model slug -> the limits the manager's ClusterQueue sets on its GPUs (absent: no limit)."""
    out: dict[str, dict[str, int]] = {}
    for group in as_list(dig(cq.props, "spec", "resourceGroups")):
        for flavor in as_list(as_dict(group).get("flavors")):
            slug = str(as_dict(flavor).get("name", "")).removeprefix("fleet-")
            for res in as_list(as_dict(flavor).get("resources")):
                if as_dict(res).get("name") == "nvidia.com/gpu":
                    out[slug] = {
                        k: int(v)
                        for k, v in as_dict(res).items()
                        if k in ("borrowingLimit", "lendingLimit") and isinstance(v, (int, float))
                    }
    return out


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    workers = [w.facts for w in fleet.workers]
    for cq in fleet.queues:
        name, ns = object_name(cq), queue_namespace(fleet, cq)
        nominal = queue_quotas(cq)
        have = _limits(cq)
        for slug, want in cohort_limits(name, ns, nominal, workers).items():
            for key, effect in (
                (
                    "borrowingLimit",
                    "a job is dispatched on GPUs no worker lends it, and holds manager quota while no worker admits it",
                ),
                ("lendingLimit", "the other queues borrow here what no worker lends them"),
            ):
                got = have.get(slug, {}).get(key)
                expected = want.get(key)
                if got == expected:
                    continue
                yield Finding(
                    f"queue '{name}'",
                    f"manager {key} for {slug} is not the workers' sum: {effect}"
                    if got is None or expected is None or got > expected
                    else f"manager {key} for {slug} is below the workers' sum: GPUs the workers give stay idle",
                    observed=f"{UNLIMITED if got is None else got}",
                    required=f"{UNLIMITED if expected is None else expected} (the sum over the workers' "
                    f"queue '{name}' in namespace {ns})",
                    fix=(
                        f"remove {key} from flavor fleet-{slug} of ClusterQueue {name}"
                        if expected is None
                        else f"set {key}: {expected} on flavor fleet-{slug} of ClusterQueue {name} (gpu-"
                        "cluster renders it from the workers' stack outputs: preview the manager again)"
                    ),
                    keys=(name, cq.name, cq.urn),
                    urn=cq.urn,
                )


RULE = register(
    Rule(
        id=ID,
        title="Fleet cohort limits match the workers",
        category=Category.CROSS_LAYER,
        description="A fleet queue's manager borrowing and lending limits per GPU model equal the sums of its workers'.",
        why=(
            "The manager's ClusterQueues share a cohort; Kueue there lets a queue borrow what its sibling leaves unused. "
            "A worker's own cohort limits (lendingLimit, borrowingLimit) cap what its queue gets; without the same caps "
            "on the manager a job is dispatched past what the workers can give it and holds quota, admitted nowhere."
        ),
        remediation="1. Set each manager ClusterQueue's borrowingLimit and lendingLimit to the sums of the workers'.",
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}ClusterQueue", f"{KUEUE_ANY}MultiKueueCluster"),
        check=check,
        stack=True,
    ),
    order=3171,
)
