"""cross-layer-fleet-kueue-version: every worker runs the manager's Kueue version."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.fleet import fleet_of
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule

ID = "cross-layer-fleet-kueue-version"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    want = fleet.manager.get("kueueVersion")
    for worker in fleet.workers:
        have = worker.facts.get("kueueVersion")
        if have != want:
            yield Finding(
                f"worker '{worker.name}'",
                "its Kueue version differs from the manager's: MultiKueue "
                "copies Workloads between them, and fields, defaults and feature gates change between "
                "releases",
                observed=f"Kueue {have} on the worker, {want} on the manager",
                required=f"Kueue {want} on every worker",
                fix="upgrade both to the same gpu-cluster version (its Kueue pin), workers first",
                keys=worker.keys,
                urn=worker.resource.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="One Kueue version across the fleet",
        category=Category.CROSS_LAYER,
        description="Every fleet worker runs the same Kueue version as the manager.",
        why=(
            "The manager writes Workloads into the workers' API servers with its own API types; a worker on another "
            "Kueue release may reject or misread fields (v1beta1 to v1beta2 moved in 0.15-0.16)."
        ),
        remediation="1. Pin the same Kueue chart on all stacks. 2. Upgrade the workers first, then the manager.",
        severity=Severity.MEDIUM,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}MultiKueueCluster", f"{KUEUE_ANY}MultiKueueConfig"),
        check=check,
        stack=True,
    ),
    order=3180,
)
