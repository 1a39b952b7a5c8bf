"""Semantic diff of two validated stack specs (plus the facts derived from them): what a reviewer asks about.

Per pool (machine type, GPUs, min/max nodes, capacity, placement, ...), per GPU runtime, per queue or Slurm account
(quotas, weights), priority class, Slurm partition, and the scheduling, cluster and stack settings. Values are the
resolved ones (defaults filled in), so writing out a default is not a change and omitting one is not either.
Lists of named things (pools, queues, quotas, priority classes, partitions, taints) are matched by name.
The flat views compared here come from ``spec_views``; this module compares them and labels the changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from preview.diff.spec_views import (
    RUNTIME_LABELS,
    Present,
    SpecSide,
    partition_views,
    pool_views,
    runtime_views,
    scheduling_flat,
    split_named,
    top_level_views,
    view_keys,
)

ADDED, REMOVED, CHANGED = "added", "removed", "changed"

POOL, RUNTIME, QUEUE, PRIORITY, PARTITION = "pool", "GPU runtime", "queue", "priority class", "Slurm partition"
SCHEDULING, CLUSTER, STACK = "scheduling", "cluster", "stack"

POOL_LABELS = {
    "machineType": "machine type",
    "gpu": "GPU",
    "gpusPerNode": "GPUs per node",
    "minNodes": "min nodes",
    "maxNodes": "max nodes",
    "maxGpus": "max GPUs",
    "capacity.type": "capacity",
    "capacity.reservation": "reservation",
    "capacity.reservationKind": "reservation kind",
    "capacity.reservationProject": "reservation project",
    "capacity.placementGroup": "reservation's placement group",
    "placement": "placement",
    "multiNode": "multi-node",
    "zones": "zones",
    "diskSizeGib": "boot disk (GiB)",
    "labels": "node labels",
    "taints": "taints",
    "upgrade.maxSurge": "upgrade max surge",
    "upgrade.maxUnavailable": "upgrade max unavailable",
    "accelerator.type": "accelerator type",
    "accelerator.count": "accelerator count",
}
POOL_FIELD_ORDER = list(POOL_LABELS)
CLUSTER_LABELS = {
    "name": "name",
    "mode": "mode",
    "releaseChannel": "release channel",
    "kubernetesVersion": "Kubernetes version",
    "authorizedNetworks": "authorized networks",
    "deletionProtection": "deletion protection",
    "systemPool.machineType": "system pool machine type",
    "systemPool.minNodes": "system pool min nodes",
    "systemPool.maxNodes": "system pool max nodes",
    "clusterAutoscaler": "Cluster Autoscaler (EKS)",
}
QUEUE_LABELS = {"fairShareWeight": "fair-share weight", "namespace": "namespace"}
QUOTA_LABELS = {"gpus": "quota", "borrowingLimit": "borrowing limit", "lendingLimit": "lending limit"}
PARTITION_LABELS = {
    "pools": "pools",
    "priorityTier": "priority tier",
    "default": "default",
    "maxNodes": "max nodes",
    "maxGpus": "max GPUs",
}


@dataclass(frozen=True)
class FieldChange:
    path: str
    """Where it is in the stack file, relative to the entity (``maxNodes``, ``quotas[h100].gpus``)."""
    label: str
    before: Any
    """None: unset (or absent on that side)."""
    after: Any

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "label": self.label, "before": self.before, "after": self.after}


@dataclass
class EntityDiff:
    kind: str
    name: str
    status: str
    changes: list[FieldChange] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    """For an added or removed entity: its main settings (so "pool added" says what was added)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "changes": [c.as_dict() for c in self.changes],
            "facts": self.facts,
        }


def _field_changes(
    before: dict[str, Any], after: dict[str, Any], labels: dict[str, str], order: list[str] | None = None
) -> list[FieldChange]:
    keys = [
        k
        for k in before.keys() | after.keys()
        if before.get(k) != after.get(k) and not isinstance(before.get(k, after.get(k)), Present)
    ]
    rank = {k: i for i, k in enumerate(order or [])}
    keys.sort(key=lambda k: (rank.get(k, len(rank)), k))
    return [FieldChange(k, labels.get(k, k), before.get(k), after.get(k)) for k in keys]


def _queue_labels(keys: Iterable[str]) -> dict[str, str]:
    labels = dict(QUEUE_LABELS)
    for key in keys:
        if key.startswith("quotas["):
            pool, _, leaf = key[len("quotas[") :].partition("].")
            if leaf in QUOTA_LABELS:
                labels[key] = f"{QUOTA_LABELS[leaf]} {pool}"
    return labels


def _entity_diffs(
    kind: str,
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
    labels: dict[str, str] | None = None,
    order: list[str] | None = None,
    facts: Iterable[str] = (),
) -> list[EntityDiff]:
    """``facts``: the keys shown for an added or removed entity; ``quotas`` stands for every quota."""
    out: list[EntityDiff] = []
    labels = labels or {}
    for name in list(before) + [n for n in after if n not in before]:
        old, new = before.get(name), after.get(name)
        if old is None or new is None:
            view = new if old is None else old
            assert view is not None  # the name comes from one of the two sides
            keys = [
                k
                for f in facts
                for k in (
                    [f]
                    if f != "quotas"
                    else sorted(k for k in view if k.startswith("quotas[") and k.endswith("].gpus"))
                )
            ]
            shown = {labels.get(k, k): view[k] for k in keys if k in view}
            out.append(EntityDiff(kind, name, ADDED if old is None else REMOVED, facts=shown))
            continue
        changes = _field_changes(old, new, labels, order)
        if changes:
            out.append(EntityDiff(kind, name, CHANGED, changes))
    return out


def diff_specs(base: SpecSide, head: SpecSide, stack: str) -> list[EntityDiff]:
    """Every semantic change between two sides, grouped by entity in reading order (stack, cluster, pools, ...)."""
    out: list[EntityDiff] = []
    b, h = base.spec, head.spec
    top_b = top_level_views(b)
    top_h = top_level_views(h)
    if b is not None and h is not None:
        out += _entity_diffs(STACK, {stack: top_b["stack"]}, {stack: top_h["stack"]})
        out += _entity_diffs(
            CLUSTER,
            {h.cluster.name: top_b["cluster"]},
            {h.cluster.name: top_h["cluster"]},
            CLUSTER_LABELS,
            list(CLUSTER_LABELS),
        )
    pools_b, pools_h = pool_views(base), pool_views(head)
    out += _entity_diffs(
        POOL,
        pools_b,
        pools_h,
        POOL_LABELS,
        POOL_FIELD_ORDER,
        facts=("machineType", "gpu", "gpusPerNode", "minNodes", "maxNodes", "maxGpus", "capacity.type", "placement"),
    )
    runtimes_b, runtimes_h = runtime_views(base), runtime_views(head)
    shared = [p for p in runtimes_b if p in runtimes_h]  # a new or removed pool already says it all
    out += _entity_diffs(
        RUNTIME,
        {p: runtimes_b[p] for p in shared},
        {p: runtimes_h[p] for p in shared},
        RUNTIME_LABELS,
        list(RUNTIME_LABELS),
    )
    if b is not None and h is not None:
        out += _entity_diffs(RUNTIME, {"all pools": top_b["gpuRuntime"]}, {"all pools": top_h["gpuRuntime"]})
    sched_b, sched_h = scheduling_flat(b), scheduling_flat(h)
    workload = next((s.scheduling.workload.value for s in (h, b) if s is not None and s.scheduling is not None), "")
    general_b = {k: v for k, v in sched_b.items() if not k.startswith(NAMED_SECTIONS)}
    general_h = {k: v for k, v in sched_h.items() if not k.startswith(NAMED_SECTIONS)}
    if general_b or general_h:
        out += _entity_diffs(
            SCHEDULING,
            {workload: general_b} if general_b else {},
            {workload: general_h} if general_h else {},
            facts=("cohort",),
        )
    queues_b, queues_h = split_named(sched_b, "queues"), split_named(sched_h, "queues")
    queue_kind = "Slurm account" if workload == "slurm" else QUEUE
    out += _entity_diffs(
        queue_kind,
        queues_b,
        queues_h,
        _queue_labels(set(view_keys(queues_b)) | set(view_keys(queues_h))),
        ["fairShareWeight"],
        facts=("quotas", "fairShareWeight"),
    )
    out += _entity_diffs(
        PRIORITY,
        split_named(sched_b, "priorityClasses"),
        split_named(sched_h, "priorityClasses"),
        {"value": "priority", "description": "description"},
        ["value"],
        facts=("value",),
    )
    out += _entity_diffs(
        PARTITION,
        partition_views(base),
        partition_views(head),
        PARTITION_LABELS,
        list(PARTITION_LABELS),
        facts=("pools", "maxNodes", "maxGpus"),
    )
    for e in out:
        for key in [k for k, v in e.facts.items() if isinstance(v, Present)]:
            del e.facts[key]
    return out


NAMED_SECTIONS = ("queues[", "priorityClasses[", "slurm.partitions[")
"""Scheduling parts shown as their own entities; everything else in ``scheduling`` is one "scheduling" entity."""
