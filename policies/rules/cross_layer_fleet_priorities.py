"""cross-layer-fleet-priorities: each of the manager's WorkloadPriorityClasses exists on every worker with the same
value, so a job's priority class means one thing wherever MultiKueue dispatches it."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding, listing
from policies.fleet import fleet_of
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule

ID = "cross-layer-fleet-priorities"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    wanted = fleet.manager.get("priorityClasses") or {}
    if not isinstance(wanted, dict) or not wanted:
        return
    for w in fleet.workers:
        have = w.facts.get("priorityClasses") or {}
        missing = sorted(n for n in wanted if n not in have)
        differ = sorted(n for n in wanted if n in have and int(have[n]) != int(wanted[n]))
        if not missing and not differ:
            continue
        seen = "; ".join(
            [
                f"missing {listing(missing)}" if missing else "",
                ", ".join(f"{n} {int(have[n])} there, {int(wanted[n])} on the manager" for n in differ),
            ]
        )
        yield Finding(
            f"worker '{w.name}'",
            "the manager's priority classes are not the worker's: a dispatched job labelled with a missing "
            "class gets no Workload there, and a class of another value orders and preempts differently "
            "than the manager decided",
            observed=seen.strip("; "),
            required="every class of fleet.priorityClasses in the worker's scheduling.priorityClasses, same value",
            fix=f"add the classes to scheduling.priorityClasses of worker '{w.name}' with the manager's "
            "values, or remove them from fleet.priorityClasses",
            keys=w.keys,
            urn=w.resource.urn,
        )


RULE = register(
    Rule(
        id=ID,
        title="Fleet priority classes exist on every worker",
        category=Category.CROSS_LAYER,
        description="Each WorkloadPriorityClass of the manager exists on every worker with the same value.",
        why=(
            "Kueue builds a Workload only for a job whose priority class exists in that cluster; MultiKueue copies the "
            "job with its label to the worker, so the class must exist there too, with the value the manager used."
        ),
        remediation="1. Mirror fleet.priorityClasses in each worker's scheduling.priorityClasses, same values.",
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}MultiKueueConfig", f"{KUEUE_ANY}MultiKueueCluster"),
        check=check,
        stack=True,
    ),
    order=3169,
)
