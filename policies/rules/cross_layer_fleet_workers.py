"""cross-layer-fleet-workers: 1-20 workers, each once, none of them the manager itself."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding, listing
from policies.fleet import config_clusters, fleet_of
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule

ID = "cross-layer-fleet-workers"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"
MAX_WORKERS = 20


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    cfgr = fleet.config
    keys = ("fleet", cfgr.name, cfgr.urn)
    clusters = config_clusters(fleet)
    if not 1 <= len(clusters) <= MAX_WORKERS:
        yield Finding(
            "MultiKueueConfig",
            "Kueue 0.16+ accepts 1 to 20 clusters",
            observed=f"{len(clusters)} clusters",
            required=f"1 to {MAX_WORKERS}",
            fix=f"split the fleet into managers of at most {MAX_WORKERS} workers",
            keys=keys,
            urn=cfgr.urn,
        )
    twice = [c for c, n in Counter(clusters).items() if n > 1]
    if twice:
        yield Finding(
            "MultiKueueConfig",
            "a worker is listed more than once",
            observed=f"repeated {listing(twice)}",
            required="each worker once",
            fix="remove the repeats from fleet.workers",
            keys=keys,
            urn=cfgr.urn,
        )
    me = (fleet.manager.get("cloud"), fleet.manager.get("region"), fleet.manager.get("cluster"))
    for worker in fleet.workers:
        if (
            worker.facts.get("cloud"),
            worker.facts.get("region"),
            worker.facts.get("cluster"),
        ) == me or worker.facts.get("role") != "worker":
            yield Finding(
                f"worker '{worker.name}'",
                "the manager cannot be its own worker, nor can a manager be a "
                "worker (Kueue does not support role sharing)",
                observed=f"{worker.facts.get('role', 'unknown role')} cluster "
                f"{worker.facts.get('cluster')} in {worker.facts.get('region')}",
                required="a worker stack (fleet role worker) other than the manager",
                fix="list worker stacks only in fleet.workers",
                keys=worker.keys,
                urn=worker.resource.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Fleet workers are distinct workers",
        category=Category.CROSS_LAYER,
        description="A fleet lists 1 to 20 workers, each once, none of them the manager or another manager.",
        why=(
            "MultiKueueConfig refuses duplicates and more than 20 clusters (Kueue 0.16, #8614); a manager dispatching "
            "to itself is unsupported role sharing (kueue#5704)."
        ),
        remediation="1. List each worker stack once in fleet.workers. 2. Keep the manager out of its own list.",
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}MultiKueueConfig", f"{KUEUE_ANY}MultiKueueCluster"),
        check=check,
        stack=True,
    ),
    order=3130,
)
