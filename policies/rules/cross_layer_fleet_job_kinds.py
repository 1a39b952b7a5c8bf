"""cross-layer-fleet-job-kinds: every job kind the fleet manager's Kueue manages is enabled on every worker."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding, listing
from policies.fleet import fleet_of
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule

ID = "cross-layer-fleet-job-kinds"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    kinds = [str(k) for k in fleet.manager.get("integrations", [])]
    for worker in fleet.workers:
        enabled = set(worker.facts.get("integrations", []))
        missing = [k for k in kinds if k not in enabled]
        if missing:
            yield Finding(
                f"worker '{worker.name}'",
                "job kinds the manager dispatches are not enabled in the "
                "worker's Kueue, which then never admits their copies",
                observed=f"missing integrations {listing(missing)}",
                required=f"the manager's integrations on every worker: {listing(kinds)}",
                fix="use the same gpu-cluster version (Kueue integrations) on the manager and the worker, or "
                "stop dispatching that kind",
                keys=worker.keys,
                urn=worker.resource.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Dispatched job kinds run on every worker",
        category=Category.CROSS_LAYER,
        description="Every job kind the fleet manager's Kueue manages is an enabled integration on every worker.",
        why=(
            "The manager dispatches any job its Kueue manages; a worker whose Kueue lacks the integration neither "
            "admits nor runs the copy, and the job waits until workerLostTimeout."
        ),
        remediation="1. Enable the integration on the worker (same gpu-cluster version). 2. `pulumi up` the worker.",
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}MultiKueueCluster", f"{KUEUE_ANY}MultiKueueConfig"),
        check=check,
        stack=True,
    ),
    order=3150,
)
