"""A stack's part in a MultiKueue fleet, planned once: whether it is the manager or a worker, and what a worker tells
the manager about itself (its GPU models, GPUs per node, maximum GPUs and pools per model; each queue's GPUs per
model). ``compose/fleet.py`` wires it; the stack outputs' names are re-exported here so compose needs no spec import."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from catalog import GpuModel
from stacks.plan.facts import PoolFacts
from stacks.plan.fleet_egress import EgressPlan
from stacks.plan.kueue_topology import namespace_of
from stacks.spec.fleet import EGRESS_OUTPUT, FACTS_OUTPUT, KUBECONFIG_OUTPUT, Fleet, FleetRole, gpu_slug
from stacks.spec.scheduling import SchedulingSpec

__all__ = ["EGRESS_OUTPUT", "FACTS_OUTPUT", "KUBECONFIG_OUTPUT", "FleetPlan", "fleet_plan"]


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
    """A worker's queues: ``{"name", "namespace", "gpus": {model: GPUs}}``."""
    model_slugs: dict[str, GpuModel]
    """A manager's fleet-quota GPU models by slug (``h100-80gb``), sorted: one fleet runtime each."""
    egress: EgressPlan | None = None
    """A manager's egress addresses: reserved (GKE), read from NAT gateways (EKS) or declared
    (``stacks/plan/fleet_egress.py``); None on a worker."""

    @property
    def manager(self) -> bool:
        return not self.worker


def fleet_plan(section: Fleet | None, sched: SchedulingSpec | None, facts: Sequence[PoolFacts],
               egress: EgressPlan | None = None) -> FleetPlan | None:
    if section is None:
        return None
    by_name = {f.name: f for f in facts}
    per_node: dict[GpuModel, int] = {}
    models: dict[str, dict[str, Any]] = {}
    for f in facts:
        per_node.setdefault(f.machine.gpu_model, f.gpus_per_node)
        entry = models.setdefault(f.machine.gpu_model.value, {"model": f.machine.gpu_model.value,
                                                              "gpusPerNode": f.gpus_per_node, "maxGpus": 0, "pools": []})
        entry["maxGpus"] += f.max_gpus
        entry["pools"].append(f.name)
    queues = []
    for queue in sched.queues if sched is not None else []:
        gpus: dict[str, int] = {}
        for quota in queue.quotas:
            model = by_name[quota.pool].machine.gpu_model.value
            gpus[model] = gpus.get(model, 0) + quota.gpus
        queues.append({"name": queue.name, "namespace": namespace_of(queue), "gpus": gpus})
    slugs = sorted({q.gpu_model for queue in section.queues for q in queue.quotas}, key=lambda m: m.value)
    return FleetPlan(section=section, worker=section.role == FleetRole.WORKER, gpus_per_node=per_node,
                     gpu_models=tuple(models.values()), queues=tuple(queues),
                     model_slugs={gpu_slug(m): m for m in slugs}, egress=egress)
