"""One side of the spec diff as flat views: per pool, GPU runtime, Slurm partition, the scheduling section and the
stack and cluster settings, resolved (defaults filled in) so writing out a default equals omitting it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from preview.cost import CostReport
from preview.diff.resources import join_path
from stacks.plan.gpu_runtime import DEFAULT_MODE
from stacks.spec.fabric import PoolFabric
from stacks.spec.stack import StackSpec

ID_KEYS = ("name", "pool", "key")
"""A list of mappings that all carry one of these keys is matched by it (``queues[team-a]``), not by position."""
ABSENT_MEANS_DEFAULT = {"fabric": PoolFabric}
"""Optional pool sections whose absence behaves exactly as the section with every default (``fabric:`` omitted is
``fabric: {mode: auto}``): writing out the default is not a change."""
RUNTIME_LABELS = {
    "mode": "mode",
    "advertiser": "advertiser of nvidia.com/gpu",
    "driver": "driver",
    "sharing": "sharing",
    "advertisedGpusPerNode": "nvidia.com/gpu per node",
    "efaDevicePlugin": "EFA device plugin",
}


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
                    out.setdefault(f"{prefix}[{v[key]}]", PRESENT)
                return out
            out = {}
            for i, v in enumerate(value):
                out.update(flatten_spec(v, f"{prefix}[{i}]"))
            return out
        return {prefix: list(value)}
    return {prefix: value}


class Present:
    """Marks that a named list entry exists even when all its other fields are unset."""

    def __repr__(self) -> str:
        return "present"


PRESENT = Present()


@dataclass(frozen=True)
class SpecSide:
    """One side of the diff as the semantic diff sees it: the validated spec and the facts the preview derived."""

    spec: StackSpec | None
    cost: CostReport | None = None
    gpu_runtime: tuple[dict[str, Any], ...] = ()


def pool_views(side: SpecSide) -> dict[str, dict[str, Any]]:
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
        view["placement"] = placement(
            side.spec.cloud.value, pool.multi_node, pool.zones, reserved=pool.capacity.type.value == "reservation"
        )
        view.pop("multiNode", None)  # placement says it in words
        out[pool.name] = view
    return out


def placement(cloud: str, multi_node: bool, zones: list[str], reserved: bool = False) -> str:
    if not multi_node:
        return f"spread ({len(zones)} zone{'s' if len(zones) != 1 else ''})"
    if cloud == "gcp":
        return "compact placement, one zone"
    # EKS reservation pools get no new placement group: the reservation places them (components/eks_gpu_node_group)
    return "the reservation's placement + EFA, one AZ" if reserved else "cluster placement group + EFA, one AZ"


def runtime_views(side: SpecSide) -> dict[str, dict[str, Any]]:
    return {r["pool"]: {k: v for k, v in r.items() if k in RUNTIME_LABELS} for r in side.gpu_runtime}


def partition_views(side: SpecSide) -> dict[str, dict[str, Any]]:
    """Slurm partitions: one per pool (named after it), ``all`` unless turned off, and the extra ones."""
    spec = side.spec
    if spec is None or spec.scheduling is None or spec.scheduling.workload.value != "slurm":
        return {}
    pools = {p.name: p for p in spec.node_pools}
    gpus = {p.pool: p.gpus_per_node for p in (side.cost.pools if side.cost else [])}

    def sizes(names: Iterable[str]) -> dict[str, Any]:
        names = [n for n in names if n in pools]
        return {
            "maxNodes": sum(pools[n].max_nodes for n in names),
            "maxGpus": sum(pools[n].max_nodes * gpus.get(n, 0) for n in names),
        }

    out = {name: {"pools": [name], **sizes([name])} for name in pools}
    slurm = spec.scheduling.slurm
    if getattr(slurm, "all_pools_partition", False):
        out["all"] = {"pools": ["every pool"], **sizes(pools)}  # "all" spans every NodeSet
    for part in getattr(slurm, "partitions", []) or []:
        out[part.name] = {
            "pools": list(part.pools),
            "priorityTier": part.priority_tier,
            "default": part.default,
            **sizes(part.pools),
        }
    return out


def scheduling_flat(spec: StackSpec | None) -> dict[str, Any]:
    if spec is None or spec.scheduling is None:
        return {}
    return flatten_spec(spec.scheduling.model_dump(by_alias=True, mode="json"))


def split_named(flat: dict[str, Any], prefix: str) -> dict[str, dict[str, Any]]:
    """``{"queues[a].gpus": 1, ...}`` with prefix ``queues`` -> ``{"a": {"gpus": 1}}``."""
    out: dict[str, dict[str, Any]] = {}
    for path, value in flat.items():
        if not path.startswith(prefix + "["):
            continue
        name, _, rest = path[len(prefix) + 1 :].partition("]")
        entry = out.setdefault(name, {})
        if rest:
            entry[rest.lstrip(".")] = value
    return out


def view_keys(views: dict[str, dict[str, Any]]) -> Iterable[str]:
    for view in views.values():
        yield from view


def top_level_views(spec: StackSpec | None) -> dict[str, dict[str, Any]]:
    if spec is None:
        return {"stack": {}, "cluster": {}, "gpuRuntime": {}}
    dump = spec.model_dump(by_alias=True, mode="json")
    stack = {k: v for k, v in dump.items() if k not in ("cluster", "nodePools", "scheduling", "gpuRuntime")}
    runtime = dump["gpuRuntime"]
    if runtime.get("mode") is None:  # writing out the default is not a change: compare resolved values
        runtime["mode"] = DEFAULT_MODE[spec.cloud].value
    return {"stack": flatten_spec(stack), "cluster": flatten_spec(dump["cluster"]), "gpuRuntime": flatten_spec(runtime)}
