"""cross-layer-fleet-queues-mirrored: every LocalQueue of a fleet manager exists, same name and namespace, on every
worker."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding, listing
from policies.fleet import fleet_of
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.scheduler_objects import object_name
from policies.values import dig

ID = "cross-layer-fleet-queues-mirrored"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    wanted = [(object_name(lq), str(dig(lq.props, "metadata", "namespace"))) for lq in fleet.local_queues]
    for worker in fleet.workers:
        have = {(q.get("name"), q.get("namespace")) for q in worker.facts.get("queues", []) if isinstance(q, dict)}
        missing = [f"{n} in {ns}" for n, ns in wanted if (n, ns) not in have]
        if missing:
            yield Finding(
                f"worker '{worker.name}'",
                "the manager's queues are not mirrored there: MultiKueue "
                "creates each dispatched workload in the worker's LocalQueue of the same name and namespace, "
                "so jobs of these queues can never run on this worker",
                observed=f"missing LocalQueue {listing(missing)}",
                required=f"every manager LocalQueue on every worker ({listing([f'{n} in {ns}' for n, ns in wanted])})",
                fix=f"add the queue (name and namespace) to scheduling.queues of the worker's stack "
                f"({worker.facts.get('cluster', worker.name)})",
                keys=worker.keys,
                urn=worker.resource.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Fleet queues exist on every worker",
        category=Category.CROSS_LAYER,
        description="Every LocalQueue of a fleet manager exists with the same name and namespace on every worker.",
        why=(
            "MultiKueue copies a job and its Workload into the same namespace on the worker and the worker's Kueue "
            "admits it through the LocalQueue named in the job; without it the copy is never admitted there "
            "(Kueue docs, setup_multikueue: namespaces and LocalQueues must be mirrored)."
        ),
        remediation=(
            "1. Add the manager's queue (name and namespace) to scheduling.queues of each worker stack. "
            "2. `pulumi up` the worker before the manager."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}MultiKueueCluster", f"{KUEUE_ANY}LocalQueue"),
        check=check,
        stack=True,
    ),
    order=3140,
)
