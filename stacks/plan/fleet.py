"""A stack's part in a MultiKueue fleet, planned once: whether it is the manager or a worker, and what a worker tells
the manager about itself (its GPU models, GPUs per node, maximum GPUs and pools per model; each queue's GPUs per
model). ``compose/fleet.py`` wires it; the stack outputs' names are re-exported here so compose needs no spec import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from catalog import GpuModel
from stacks.plan.facts import PoolFacts
from stacks.plan.fleet_egress import EgressPlan
from stacks.plan.kueue_topology import namespace_of
from stacks.spec.fleet import (
    EGRESS_OUTPUT,
    FACTS_OUTPUT,
    KUBECONFIG_OUTPUT,
    RUNTIME_IMAGE_OUTPUT,
    Fleet,
    FleetRole,
    gpu_slug,
)
from stacks.spec.scheduling import SchedulingSpec

__all__ = [
    "EGRESS_OUTPUT",
    "FACTS_OUTPUT",
    "KUBECONFIG_OUTPUT",
    "RUNTIME_IMAGE_OUTPUT",
    "FleetPlan",
    "cohort_limits",
    "fleet_plan",
]


@dataclass(frozen=True)
class FleetPlan:
    section: Fleet
    """The validated ``fleet`` section (workers, queues, dispatcher, token generation, egress)."""
    worker: bool
    gpus_per_node: dict[GpuModel, int]
    """A worker's GPUs per node of each model: the first pool of that model, in spec order."""
    gpu_models: tuple[dict[str, Any], ...]
    """A worker's GPU models: ``{"model", "gpusPerNode", "maxGpus", "pools"}``, in spec order of first pool."""
    queues: tuple[dict[str, Any], ...]
    """A worker's queues: ``{"name", "namespace", "gpus", "lendable", "borrowable"}``, each ``{model: GPUs}``:
    nominal quota, what the queue lends its cohort at most, what it can borrow there at most."""
    model_slugs: dict[str, GpuModel]
    """A manager's fleet-quota GPU models by slug (``h100-80gb``), sorted: one fleet runtime each."""
    egress: EgressPlan | None = None
    """A manager's egress addresses: reserved (GKE), read from NAT gateways (EKS) or declared
    (``stacks/plan/fleet_egress.py``); None on a worker."""

    @property
    def manager(self) -> bool:
        return not self.worker


def fleet_plan(
    section: Fleet | None,
    sched: SchedulingSpec | None,
    facts: Sequence[PoolFacts],
    egress: EgressPlan | None = None,
    windows: Mapping[str, Mapping[str, Any]] | None = None,
) -> FleetPlan | None:
    """``windows``: pool -> its capacity block's window (``start``, ``end``, UTC): its nodes exist only inside it."""
    if section is None:
        return None
    by_name = {f.name: f for f in facts}
    per_node: dict[GpuModel, int] = {}
    models: dict[str, dict[str, Any]] = {}
    for f in facts:
        per_node.setdefault(f.machine.gpu_model, f.gpus_per_node)
        entry = models.setdefault(
            f.machine.gpu_model.value,
            {"model": f.machine.gpu_model.value, "gpusPerNode": f.gpus_per_node, "maxGpus": 0, "pools": []},
        )
        entry["maxGpus"] += f.max_gpus
        entry["pools"].append(f.name)
        if windows and f.name in windows:
            entry.setdefault("windows", {})[f.name] = dict(windows[f.name])
    queues = _queue_facts(sched, by_name)
    slugs = sorted({q.gpu_model for queue in section.queues for q in queue.quotas}, key=lambda m: m.value)
    return FleetPlan(
        section=section,
        worker=section.role == FleetRole.WORKER,
        gpus_per_node=per_node,
        gpu_models=tuple(models.values()),
        queues=tuple(queues),
        model_slugs={gpu_slug(m): m for m in slugs},
        egress=egress,
    )


def _queue_facts(sched: SchedulingSpec | None, pools: dict[str, PoolFacts]) -> list[dict[str, Any]]:
    """Per queue and GPU model: nominal GPUs; lendable (``lendingLimit``, else all its nominal quota); borrowable, the
    most its own Kueue can give it beyond nominal (its ``borrowingLimit``, no more than its cohort siblings lend; 0
    without a cohort). The manager mirrors the sums as its own cohort limits (``render/fleet_manager.py``)."""
    if sched is None:
        return []
    rows: list[dict[str, Any]] = []
    for queue in sched.queues:
        gpus: dict[str, int] = {}
        lendable: dict[str, int] = {}
        limit: dict[str, int | None] = {}
        for quota in queue.quotas:
            model = pools[quota.pool].machine.gpu_model.value
            gpus[model] = gpus.get(model, 0) + quota.gpus
            lent = quota.gpus if quota.lending_limit is None else min(quota.lending_limit, quota.gpus)
            lendable[model] = lendable.get(model, 0) + lent
            prev = limit.get(model, 0)
            limit[model] = None if prev is None or quota.borrowing_limit is None else prev + quota.borrowing_limit
        rows.append(
            {"name": queue.name, "namespace": namespace_of(queue), "gpus": gpus, "lendable": lendable, "limit": limit}
        )
    for row in rows:
        borrowable: dict[str, int] = {}
        caps: dict[str, int | None] = row.pop("limit")
        for model, cap in caps.items():
            others = sum(r["lendable"].get(model, 0) for r in rows if r is not row) if sched.cohort else 0
            borrowable[model] = others if cap is None else min(cap, others)
        row["borrowable"] = borrowable
    return rows


def cohort_limits(
    queue: str, namespace: str, nominal: Mapping[str, int], workers: Sequence[Mapping[str, Any] | None]
) -> dict[str, dict[str, int]]:
    """GPU model slug (``h100-80gb``) -> the manager ClusterQueue's ``borrowingLimit`` and ``lendingLimit`` for a
    fleet queue with ``nominal`` GPUs per model: the sums over the workers' mirrored queue (same name and namespace)
    of what each can borrow in its cohort and lends to it (``borrowable``, ``lendable`` of its exported facts; a
    worker whose facts are unknown counts 0). ``lendingLimit`` is left out when the workers lend all of the nominal
    quota (Kueue: no limit means all of it; it refuses one above the nominal quota). Read by the renderer and by the
    pack rule ``cross-layer-fleet-cohort-limits``."""
    out = {}
    for slug, gpus in nominal.items():
        lend = borrow = 0
        for facts in workers:
            for q in (facts or {}).get("queues") or []:
                if q.get("name") != queue or q.get("namespace") != namespace:
                    continue
                for model, n in (q.get("gpus") or {}).items():
                    if str(model).lower().replace("_", "-") == slug:
                        lend += int((q.get("lendable") or {}).get(model, n))
                        borrow += int((q.get("borrowable") or {}).get(model, 0))
        out[slug] = {"borrowingLimit": borrow} | ({"lendingLimit": lend} if lend < gpus else {})
    return out
