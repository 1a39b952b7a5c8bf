"""Would a worker's Kueue admit a fleet job? The ported flavor assigner (``stacks/plan/admission.py``) run on what the
worker exports (its ``fleet`` output's ``admission``: flavors, topologies, queues and the fleet runtimes' PodSets, as
rendered there). The preview's "runs on", the pack's ``cross-layer-fleet-admissible`` and the what-if's fleet model
all call ``fleet_verdict``, so the three agree. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from stacks.plan.admission import (
    Assignment,
    Quota,
    assign,
    flavor_mismatch,
    max_capacity,
    podset_from_template,
    queue_from_objects,
    rule_of,
)


@dataclass(frozen=True)
class Verdict:
    worker: str
    queue: str
    model: str
    runtime: str | None
    assignment: Assignment | None
    """None: the worker has no such queue or runtime (nothing to decide)."""

    @property
    def admissible(self) -> bool:
        return self.assignment is not None and self.assignment.admissible

    @property
    def flavor(self) -> str | None:
        if self.assignment is None:
            return None
        if self.assignment.flavors:
            return next(iter(self.assignment.flavors.values()))
        return self.assignment.considered[0][0] if self.assignment.considered else None

    @property
    def reason(self) -> str:
        if self.assignment is None:
            return f"worker '{self.worker}' has no queue '{self.queue}' or no {self.model} runtime"
        return self.assignment.why()

    @property
    def rule(self) -> str:
        if self.assignment is None or not self.assignment.considered:
            return "Kueue's flavor assignment"
        return rule_of(self.assignment.considered[0][1])


def fleet_verdict(worker: str, facts: Mapping[str, Any], queue: str, model: str) -> Verdict:
    """The fleet runtime of ``model`` (its PodSet as the worker renders it) submitted to the worker's ClusterQueue
    ``queue`` on an empty cluster: admissible, on which flavor, or which flavor Kueue skipped and why."""
    adm = facts.get("admission") or {}
    cq = (adm.get("queues") or {}).get(queue)
    runtime = (adm.get("runtimes") or {}).get(model)
    if cq is None or runtime is None:
        return Verdict(worker, queue, model, runtime.get("name") if runtime else None, None)
    shape = queue_from_objects(cq, adm.get("flavors") or [], adm.get("topologies") or [])
    ps = podset_from_template("node", int(runtime.get("count", 1)), runtime["template"])
    return Verdict(worker, queue, model, runtime.get("name"), assign(shape, ps))


def quota_for(facts: Mapping[str, Any], queue: str, namespace: str, model: str) -> int:
    """GPUs of ``model`` the worker's mirrored queue (name and namespace) has: 0 when none."""
    return sum(
        int((q.get("gpus") or {}).get(model, 0))
        for q in facts.get("queues") or []
        if isinstance(q, dict) and q.get("name") == queue and q.get("namespace") == namespace
    )


def admitting_pools(facts: Mapping[str, Any], queue: str, model: str) -> set[str]:
    """The worker's pools (by flavor) Kueue could ever give the fleet runtime of ``model`` in ``queue``: every flavor
    that passes the per-flavor checks and whose maximum capacity holds the PodSet (the what-if's fleet model keeps
    only these in the worker's mirrored queue)."""
    adm = facts.get("admission") or {}
    cq = (adm.get("queues") or {}).get(queue)
    runtime = (adm.get("runtimes") or {}).get(model)
    if cq is None or runtime is None:
        return set()
    shape = queue_from_objects(cq, adm.get("flavors") or [], adm.get("topologies") or [])
    ps = podset_from_template("node", int(runtime.get("count", 1)), runtime["template"])
    pools = adm.get("flavorPools") or {}
    out = set()
    for group in shape.groups:
        for name in group.flavors:
            fits = all(
                ps.requests[r] * ps.count <= max_capacity(shape, group.quotas.get((name, r), Quota(0)))
                for r in group.covered
                if ps.requests.get(r, 0) > 0
            )
            if flavor_mismatch(shape, ps, name, group) is None and fits and name in pools:
                out.add(pools[name])
    return out
