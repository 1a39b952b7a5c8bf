"""Semantic diff of two validated stack specs (plus the facts derived from them): what a reviewer asks about.

Per pool (machine type, GPUs, min/max nodes, capacity, placement, ...), per GPU runtime, per queue or Slurm account
(quotas, weights), priority class, Slurm partition, and the scheduling, cluster and stack settings. Values are the
resolved ones (defaults filled in), so writing out a default is not a change and omitting one is not either.
Lists of named things (pools, queues, quotas, priority classes, partitions, taints) are matched by name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from preview.cost import CostReport
from preview.diff.resources import join_path
from stacks.plan.gpu_runtime import DEFAULT_MODE
from stacks.spec.fabric import PoolFabric
from stacks.spec.stack import StackSpec

ADDED, REMOVED, CHANGED = "added", "removed", "changed"
ID_KEYS = ("name", "pool", "key")
"""A list of mappings that all carry one of these keys is matched by it (``queues[team-a]``), not by position."""

POOL, RUNTIME, QUEUE, PRIORITY, PARTITION = "pool", "GPU runtime", "queue", "priority class", "Slurm partition"
SCHEDULING, CLUSTER, STACK = "scheduling", "cluster", "stack"

POOL_LABELS = {
    "machineType": "machine type", "gpu": "GPU", "gpusPerNode": "GPUs per node", "minNodes": "min nodes",
    "maxNodes": "max nodes", "maxGpus": "max GPUs", "capacity.type": "capacity", "capacity.reservation": "reservation",
    "capacity.reservationKind": "reservation kind", "capacity.reservationProject": "reservation project",
    "capacity.placementGroup": "reservation's placement group",
    "placement": "placement", "multiNode": "multi-node", "zones": "zones", "diskSizeGib": "boot disk (GiB)",
    "labels": "node labels", "taints": "taints", "upgrade.maxSurge": "upgrade max surge",
    "upgrade.maxUnavailable": "upgrade max unavailable",
    "accelerator.type": "accelerator type", "accelerator.count": "accelerator count",
}
POOL_FIELD_ORDER = list(POOL_LABELS)
ABSENT_MEANS_DEFAULT = {"fabric": PoolFabric}
"""Optional pool sections whose absence behaves exactly as the section with every default (``fabric:`` omitted is
``fabric: {mode: auto}``): writing out the default is not a change."""
RUNTIME_LABELS = {
    "mode": "mode", "advertiser": "advertiser of nvidia.com/gpu", "driver": "driver", "sharing": "sharing",
    "advertisedGpusPerNode": "nvidia.com/gpu per node",
    "efaDevicePlugin": "EFA device plugin",
}
CLUSTER_LABELS = {
    "name": "name", "mode": "mode", "releaseChannel": "release channel", "kubernetesVersion": "Kubernetes version",
    "authorizedNetworks": "authorized networks", "deletionProtection": "deletion protection",
    "systemPool.machineType": "system pool machine type", "systemPool.minNodes": "system pool min nodes",
    "systemPool.maxNodes": "system pool max nodes", "clusterAutoscaler": "Cluster Autoscaler (EKS)",
}
QUEUE_LABELS = {"fairShareWeight": "fair-share weight", "namespace": "namespace"}
QUOTA_LABELS = {"gpus": "quota", "borrowingLimit": "borrowing limit", "lendingLimit": "lending limit"}
PARTITION_LABELS = {"pools": "pools", "priorityTier": "priority tier", "default": "default", "maxNodes": "max nodes",
                    "maxGpus": "max GPUs"}


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
        return {"kind": self.kind, "name": self.name, "status": self.status,
                "changes": [c.as_dict() for c in self.changes], "facts": self.facts}


def flatten_spec(value: Any, prefix: str = "") -> dict[str, Any]:
    """Resolved spec -> ``{"nodePools[h100].maxNodes": 8, "zones": [...]}``. Lists of scalars stay one value; empty
    mappings and lists vanish (so adding the first label reads as that label, not as a new empty mapping)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten_spec(v, join_path(prefix, str(k))))
        return out
    if isinstance(value, list):
        if not value:
            return {}
        if all(isinstance(v, dict) for v in value):
            key = next((k for k in ID_KEYS if all(k in v for v in value)), None)
            if key is not None:
                out = {}
                for v in value:
                    out.update(flatten_spec({k: x for k, x in v.items() if k != key}, f"{prefix}[{v[key]}]"))
                    out.setdefault(f"{prefix}[{v[key]}]", _PRESENT)
                return out
            out = {}
            for i, v in enumerate(value):
                out.update(flatten_spec(v, f"{prefix}[{i}]"))
            return out
        return {prefix: list(value)}
    return {prefix: value}


class _Present:
    """Marks that a named list entry exists even when all its other fields are unset."""

    def __repr__(self) -> str:
        return "present"


_PRESENT = _Present()


def _field_changes(before: dict[str, Any], after: dict[str, Any], labels: dict[str, str],
                   order: list[str] | None = None) -> list[FieldChange]:
    keys = [k for k in before.keys() | after.keys() if before.get(k) != after.get(k)
            and not isinstance(before.get(k, after.get(k)), _Present)]
    rank = {k: i for i, k in enumerate(order or [])}
    keys.sort(key=lambda k: (rank.get(k, len(rank)), k))
    return [FieldChange(k, labels.get(k, k), before.get(k), after.get(k)) for k in keys]


@dataclass(frozen=True)
class SpecSide:
    """One side of the diff as the semantic diff sees it: the validated spec and the facts the preview derived."""

    spec: StackSpec | None
    cost: CostReport | None = None
    gpu_runtime: tuple[dict[str, Any], ...] = ()


def _pools(side: SpecSide) -> dict[str, dict[str, Any]]:
    """Pool name -> flat view: what the user wrote plus GPU model, GPUs per node, max GPUs and placement."""
    if side.spec is None:
        return {}
    costs = {p.pool: p for p in (side.cost.pools if side.cost else [])}
    out: dict[str, dict[str, Any]] = {}
    for pool in side.spec.node_pools:
        raw = pool.model_dump(by_alias=True, mode="json")
        for key, model in ABSENT_MEANS_DEFAULT.items():  # written out as the default: the same pool as unset
            if raw.get(key) == model().model_dump(by_alias=True, mode="json"):
                raw[key] = None
        raw.pop("name")
        raw.pop("gpuRuntime", None)  # shown through the derived GPU runtime view
        # one readable value each, as kubectl prints them: "tier=eval", "dedicated=ml:NoSchedule"
        labels = [f"{k}={v}" for k, v in sorted(raw.pop("labels", {}).items())]
        taints = [f"{t['key']}={t['value']}:{t['effect']}" for t in raw.pop("taints", [])]
        view = flatten_spec(raw)
        view.update({"labels": labels, "taints": taints})
        cost = costs.get(pool.name)
        if cost is not None:
            view.update(gpu=cost.gpu_model, gpusPerNode=cost.gpus_per_node, maxGpus=cost.gpus_per_node * pool.max_nodes)
        view["placement"] = _placement(side.spec.cloud.value, pool.multi_node, pool.zones,
                                       reserved=pool.capacity.type.value == "reservation")
        view.pop("multiNode", None)  # placement says it in words
        out[pool.name] = view
    return out


def _placement(cloud: str, multi_node: bool, zones: list[str], reserved: bool = False) -> str:
    if not multi_node:
        return f"spread ({len(zones)} zone{'s' if len(zones) != 1 else ''})"
    if cloud == "gcp":
        return "compact placement, one zone"
    # EKS reservation pools get no new placement group: the reservation places them (components/eks_gpu_node_group)
    return "the reservation's placement + EFA, one AZ" if reserved else "cluster placement group + EFA, one AZ"


def _runtimes(side: SpecSide) -> dict[str, dict[str, Any]]:
    return {r["pool"]: {k: v for k, v in r.items() if k in RUNTIME_LABELS} for r in side.gpu_runtime}


def _partitions(side: SpecSide) -> dict[str, dict[str, Any]]:
    """Slurm partitions: one per pool (named after it), ``all`` unless turned off, and the extra ones."""
    spec = side.spec
    if spec is None or spec.scheduling is None or spec.scheduling.workload.value != "slurm":
        return {}
    pools = {p.name: p for p in spec.node_pools}
    gpus = {p.pool: p.gpus_per_node for p in (side.cost.pools if side.cost else [])}

    def sizes(names: Iterable[str]) -> dict[str, Any]:
        names = [n for n in names if n in pools]
        return {"maxNodes": sum(pools[n].max_nodes for n in names),
                "maxGpus": sum(pools[n].max_nodes * gpus.get(n, 0) for n in names)}

    out = {name: {"pools": [name], **sizes([name])} for name in pools}
    slurm = spec.scheduling.slurm
    if getattr(slurm, "all_pools_partition", False):
        out["all"] = {"pools": ["every pool"], **sizes(pools)}  # "all" spans every NodeSet
    for part in getattr(slurm, "partitions", []) or []:
        out[part.name] = {"pools": list(part.pools), "priorityTier": part.priority_tier, "default": part.default,
                          **sizes(part.pools)}
    return out


def _scheduling_flat(spec: StackSpec | None) -> dict[str, Any]:
    if spec is None or spec.scheduling is None:
        return {}
    return flatten_spec(spec.scheduling.model_dump(by_alias=True, mode="json"))


def _split(flat: dict[str, Any], prefix: str) -> dict[str, dict[str, Any]]:
    """``{"queues[a].gpus": 1, ...}`` with prefix ``queues`` -> ``{"a": {"gpus": 1}}``."""
    out: dict[str, dict[str, Any]] = {}
    for path, value in flat.items():
        if not path.startswith(prefix + "["):
            continue
        name, _, rest = path[len(prefix) + 1:].partition("]")
        entry = out.setdefault(name, {})
        if rest:
            entry[rest.lstrip(".")] = value
    return out


def _queue_labels(keys: Iterable[str]) -> dict[str, str]:
    labels = dict(QUEUE_LABELS)
    for key in keys:
        if key.startswith("quotas["):
            pool, _, leaf = key[len("quotas["):].partition("].")
            if leaf in QUOTA_LABELS:
                labels[key] = f"{QUOTA_LABELS[leaf]} {pool}"
    return labels


def _entity_diffs(kind: str, before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]],
                  labels: dict[str, str] | None = None, order: list[str] | None = None,
                  facts: Iterable[str] = ()) -> list[EntityDiff]:
    """``facts``: the keys shown for an added or removed entity; ``quotas`` stands for every quota."""
    out: list[EntityDiff] = []
    labels = labels or {}
    for name in list(before) + [n for n in after if n not in before]:
        old, new = before.get(name), after.get(name)
        if old is None or new is None:
            view = new if old is None else old
            assert view is not None  # the name comes from one of the two sides
            keys = [k for f in facts for k in ([f] if f != "quotas" else sorted(
                k for k in view if k.startswith("quotas[") and k.endswith("].gpus")))]
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
    top_b = _top_level(b)
    top_h = _top_level(h)
    if b is not None and h is not None:
        out += _entity_diffs(STACK, {stack: top_b["stack"]}, {stack: top_h["stack"]})
        out += _entity_diffs(CLUSTER, {h.cluster.name: top_b["cluster"]}, {h.cluster.name: top_h["cluster"]},
                             CLUSTER_LABELS, list(CLUSTER_LABELS))
    pools_b, pools_h = _pools(base), _pools(head)
    out += _entity_diffs(POOL, pools_b, pools_h, POOL_LABELS, POOL_FIELD_ORDER,
                         facts=("machineType", "gpu", "gpusPerNode", "minNodes", "maxNodes", "maxGpus",
                                "capacity.type", "placement"))
    runtimes_b, runtimes_h = _runtimes(base), _runtimes(head)
    shared = [p for p in runtimes_b if p in runtimes_h]  # a new or removed pool already says it all
    out += _entity_diffs(RUNTIME, {p: runtimes_b[p] for p in shared}, {p: runtimes_h[p] for p in shared},
                         RUNTIME_LABELS, list(RUNTIME_LABELS))
    if b is not None and h is not None:
        out += _entity_diffs(RUNTIME, {"all pools": top_b["gpuRuntime"]}, {"all pools": top_h["gpuRuntime"]})
    sched_b, sched_h = _scheduling_flat(b), _scheduling_flat(h)
    workload = next((s.scheduling.workload.value for s in (h, b) if s is not None and s.scheduling is not None), "")
    general_b = {k: v for k, v in sched_b.items() if not k.startswith(NAMED_SECTIONS)}
    general_h = {k: v for k, v in sched_h.items() if not k.startswith(NAMED_SECTIONS)}
    if general_b or general_h:
        out += _entity_diffs(SCHEDULING, {workload: general_b} if general_b else {},
                             {workload: general_h} if general_h else {}, facts=("cohort",))
    queues_b, queues_h = _split(sched_b, "queues"), _split(sched_h, "queues")
    queue_kind = "Slurm account" if workload == "slurm" else QUEUE
    out += _entity_diffs(queue_kind, queues_b, queues_h, _queue_labels(set(_keys(queues_b)) | set(_keys(queues_h))),
                         ["fairShareWeight"], facts=("quotas", "fairShareWeight"))
    out += _entity_diffs(PRIORITY, _split(sched_b, "priorityClasses"), _split(sched_h, "priorityClasses"),
                         {"value": "priority", "description": "description"}, ["value"], facts=("value",))
    out += _entity_diffs(PARTITION, _partitions(base), _partitions(head), PARTITION_LABELS, list(PARTITION_LABELS),
                         facts=("pools", "maxNodes", "maxGpus"))
    for e in out:
        for key in [k for k, v in e.facts.items() if isinstance(v, _Present)]:
            del e.facts[key]
    return out


NAMED_SECTIONS = ("queues[", "priorityClasses[", "slurm.partitions[")
"""Scheduling parts shown as their own entities; everything else in ``scheduling`` is one "scheduling" entity."""


def _keys(views: dict[str, dict[str, Any]]) -> Iterable[str]:
    for view in views.values():
        yield from view


def _top_level(spec: StackSpec | None) -> dict[str, dict[str, Any]]:
    if spec is None:
        return {"stack": {}, "cluster": {}, "gpuRuntime": {}}
    dump = spec.model_dump(by_alias=True, mode="json")
    stack = {k: v for k, v in dump.items() if k not in ("cluster", "nodePools", "scheduling", "gpuRuntime")}
    runtime = dump["gpuRuntime"]
    if runtime.get("mode") is None:  # writing out the default is not a change: compare resolved values
        runtime["mode"] = DEFAULT_MODE[spec.cloud].value
    return {"stack": flatten_spec(stack), "cluster": flatten_spec(dump["cluster"]), "gpuRuntime": flatten_spec(runtime)}
