"""cross-layer-fleet-gpus-per-node: every worker with a GPU model agrees on its GPUs per node, so the fleet runtime
``fleet-<model>`` is the same object on every cluster."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.fleet import fleet_of
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule

ID = "cross-layer-fleet-gpus-per-node"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    first: dict[str, tuple[str, int]] = {}  # model -> (worker, GPUs per node) of the first worker that has it
    for w in fleet.workers:
        for g in w.facts.get("gpus") or []:
            if not isinstance(g, dict) or not isinstance(g.get("gpusPerNode"), (int, float)):
                continue
            model, n = str(g.get("model")), int(g["gpusPerNode"])  # numbers arrive as floats over the wire
            if model not in first:
                first[model] = (w.name, n)
                continue
            other, m = first[model]
            if n != m:
                yield Finding(
                    f"worker '{w.name}'",
                    f"its {model} nodes have {n} GPUs where worker '{other}''s have {m}: the fleet runtime "
                    "requests a whole node's GPUs and is rendered from each cluster's own pools, so the "
                    "manager's Workload and this worker's copy differ (MultiKueue cannot keep them in sync) "
                    "and a job sized for one never fits the other",
                    observed=f"{model}: {n} GPUs per node on '{w.name}', {m} on '{other}'",
                    required=f"the same GPUs per node for {model} on every worker",
                    fix=f"use {model} machines of {m} GPUs on '{w.name}', or leave {model} out of its "
                    "fleet queues and run it through a separate fleet",
                    keys=w.keys,
                    urn=w.resource.urn,
                )


RULE = register(
    Rule(
        id=ID,
        title="Fleet workers agree on GPUs per node",
        category=Category.CROSS_LAYER,
        description="Every worker with a GPU model has the same number of GPUs per node of it.",
        why=(
            "A fleet runtime asks for one node's GPUs and must be the same object on the manager and every worker; "
            "a worker whose nodes of that model differ renders another runtime, so the dispatched copy is out of sync."
        ),
        remediation="1. Align the machine types of that GPU model across workers, or 2. drop the model from the fleet.",
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}MultiKueueCluster",),
        check=check,
        stack=True,
    ),
    order=3168,
)
