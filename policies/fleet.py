"""Readers for a fleet manager's resources: the MultiKueue objects, the manager's facts (on the MultiKueueConfig) and
each worker's exported facts (on its MultiKueueCluster), as JSON annotations the program writes from the
StackReferences. A worker whose facts are unknown at preview (its stack not deployed yet) is skipped."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator

from policies.rule import Resource
from policies.scheduler_objects import kueue_kind, object_name
from policies.values import as_dict, as_list, dig

MANAGER_FACTS = "gpu-cluster/manager-facts"
WORKER_FACTS = "gpu-cluster/worker-facts"
"""The annotations of ``render/fleet_manager.py`` (the pack cannot import the renderers' constants' module
without pulling the scheduling layer in; a test pins that both agree)."""


@dataclass(frozen=True)
class Worker:
    name: str
    resource: Resource
    facts: dict[str, Any]

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.name, self.resource.name, self.resource.urn)


@dataclass(frozen=True)
class Fleet:
    config: Resource
    """The MultiKueueConfig."""
    manager: dict[str, Any]
    workers: list[Worker]
    queues: list[Resource]
    """The manager's ClusterQueues."""
    local_queues: list[Resource]


def _facts(r: Resource, key: str) -> dict[str, Any] | None:
    text = dig(r.props, "metadata", "annotations", key)
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def fleet_of(resources: list[Resource]) -> Fleet | None:
    """The fleet this stack manages, or None (not a manager, or no facts: nothing to check)."""
    configs = [r for r in resources if kueue_kind(r) == "MultiKueueConfig"]
    if len(configs) != 1:
        return None
    manager = _facts(configs[0], MANAGER_FACTS)
    if manager is None:
        return None
    workers = []
    for r in resources:
        if kueue_kind(r) == "MultiKueueCluster":
            facts = _facts(r, WORKER_FACTS)
            if facts is not None:
                workers.append(Worker(object_name(r), r, facts))
    order = {name: i for i, name in enumerate(str(c) for c in as_list(dig(configs[0].props, "spec", "clusters")))}
    workers.sort(key=lambda w: (order.get(w.name, len(order)), w.name))  # the MultiKueueConfig's order
    return Fleet(
        configs[0],
        manager,
        workers,
        [r for r in resources if kueue_kind(r) == "ClusterQueue"],
        [r for r in resources if kueue_kind(r) == "LocalQueue"],
    )


def config_clusters(fleet: Fleet) -> list[str]:
    return [str(c) for c in as_list(dig(fleet.config.props, "spec", "clusters"))]


def queue_quotas(cq: Resource) -> dict[str, int]:
    """GPU model -> nominal GPUs of a manager ClusterQueue (flavor ``fleet-<model slug>`` -> the model's slug)."""
    out: dict[str, int] = {}
    for group in as_list(dig(cq.props, "spec", "resourceGroups")):
        for flavor in as_list(as_dict(group).get("flavors")):
            slug = str(as_dict(flavor).get("name", "")).removeprefix("fleet-")
            for res in as_list(as_dict(flavor).get("resources")):
                quota = as_dict(res).get("nominalQuota")
                if as_dict(res).get("name") == "nvidia.com/gpu" and isinstance(quota, (int, float)):
                    out[slug] = out.get(slug, 0) + int(quota)
    return out


def slug(model: str) -> str:
    """``H100_80GB`` -> ``h100-80gb`` (how flavors and runtimes name a model)."""
    return model.lower().replace("_", "-")


def queue_namespace(fleet: Fleet, cq: Resource) -> str:
    """The namespace of the manager LocalQueue that points at ``cq`` (the ClusterQueue's name when none does)."""
    name = object_name(cq)
    return next(
        (
            str(dig(lq.props, "metadata", "namespace"))
            for lq in fleet.local_queues
            if dig(lq.props, "spec", "clusterQueue") == name
        ),
        name,
    )


def manager_quotas(fleet: Fleet) -> Iterator[tuple[Resource, str, str, str, int]]:
    """Each manager ClusterQueue's positive GPU quota: (the queue, its name, its namespace, the model's slug, GPUs)."""
    for cq in fleet.queues:
        name, ns = object_name(cq), queue_namespace(fleet, cq)
        for model_slug, gpus in queue_quotas(cq).items():
            if gpus > 0:
                yield cq, name, ns, model_slug, gpus
