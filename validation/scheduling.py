"""Rules of the shared scheduling section that span fields or need the pools (both workloads; Kueue-only rules marked).

Each check returns SpecIssues with the config path, the value, what is allowed and the fix; none raises. Slurm-only
rules live in the Slurm engineer's own module.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable

from catalog import Catalog, Cloud
from scheduling.kueue_topology import has_block_labels, is_fixed_size
from validation.issues import SpecIssue, allowed_list, choice_fix, path_of
from stacks.scheduling_spec import SchedulingSpec, TopologyLevel, TopologyMode, Workload
from stacks.spec import NodePool

DNS_1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_RULE = "a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit"
RESERVED_NAMESPACES = ("default", "kueue-system", "kubeflow-system", "kubeflow")
"""Plus every ``kube-*`` namespace: system namespaces and the ones gpu-cluster installs into."""
PRIORITY_MIN, PRIORITY_MAX = -2_147_483_648, 1_000_000_000
"""Kueue WorkloadPriorityClass values are int32; above 1e9 Kubernetes reserves priorities for system components."""

_S = "scheduling"


@dataclass(frozen=True)
class PoolCapacity:
    index: int
    name: str
    machine_type: str
    gpus_per_node: int
    min_nodes: int
    max_nodes: int

    @property
    def max_gpus(self) -> int:
        return self.gpus_per_node * self.max_nodes


def pool_capacities(cat: Catalog, cloud: Cloud | None, pools: Iterable[tuple[int, NodePool]]) -> dict[str, PoolCapacity]:
    """GPUs per node and node range of each pool whose machine type resolves in the catalog."""
    out: dict[str, PoolCapacity] = {}
    if cloud is None:
        return out
    for i, pool in pools:
        acc = pool.accelerator
        machine = cat.resolve(cloud, pool.machine_type, acc.type if acc else None, acc.count if acc else None)
        if machine is not None and pool.name not in out:
            out[pool.name] = PoolCapacity(i, pool.name, pool.machine_type, machine.gpus, pool.min_nodes, pool.max_nodes)
    return out


def check_scheduling(cat: Catalog, cloud: Cloud | None, raw_pools: Any, pools: list[tuple[int, NodePool]],
                     sched: SchedulingSpec) -> list[SpecIssue]:
    """Every cross-field rule of ``gpu-cluster:scheduling``; ``raw_pools`` is the unparsed ``nodePools`` value, so a
    pool that failed its own checks is still a known name (it is reported once, where it is wrong)."""
    known = [p["name"] for p in raw_pools if isinstance(p, dict) and isinstance(p.get("name"), str)] \
        if isinstance(raw_pools, list) else []
    caps = pool_capacities(cat, cloud, pools)
    issues = _check_names(sched) + _check_quotas(sched, known, caps)
    if sched.workload == Workload.KUBEFLOW and cloud is not None:
        issues += _check_topology(cloud, sched, caps)
        issues += _check_fair_share(sched)
    if sched.workload != Workload.KUBEFLOW and "kubeflow" in sched.model_fields_set:
        issues.append(SpecIssue(path_of(_S, "kubeflow"), "Kubeflow settings apply only to workload kubeflow",
                                sched.kubeflow.model_dump(by_alias=True), "workload: kubeflow",
                                "remove scheduling.kubeflow, or set scheduling.workload: kubeflow"))
    return issues


# -- names ------------------------------------------------------------------------------------------------------
def _bad_label(name: str) -> bool:
    return len(name) > 63 or not DNS_1123_LABEL.match(name)


def _check_names(sched: SchedulingSpec) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    if sched.cohort is not None and _bad_label(sched.cohort):
        issues.append(SpecIssue(path_of(_S, "cohort"), "not a valid cohort name", sched.cohort, LABEL_RULE,
                                "rename the cohort, e.g. 'ml'"))
    seen: dict[str, int] = {}
    for i, queue in enumerate(sched.queues):
        if _bad_label(queue.name):
            issues.append(SpecIssue(path_of(_S, "queues", i, "name"), "not a valid queue name", queue.name,
                                    LABEL_RULE, "rename the queue, e.g. 'team-a'"))
        norm = queue.name.lower().replace("_", "-")
        if norm in seen:
            issues.append(SpecIssue(path_of(_S, "queues", i, "name"),
                                    f"duplicate queue name (same as queues[{seen[norm]}])", queue.name,
                                    "unique queue names", "rename one of the queues"))
        seen.setdefault(norm, i)
        if queue.namespace is not None:
            issues += _check_namespace(i, queue.namespace)
    seen = {}
    for i, pc in enumerate(sched.priority_classes):
        path = path_of(_S, "priorityClasses", i)
        if _bad_label(pc.name):
            issues.append(SpecIssue(path + ".name", "not a valid priority class name", pc.name, LABEL_RULE,
                                    "rename the class, e.g. 'high'"))
        if pc.name in seen:
            issues.append(SpecIssue(path + ".name", f"duplicate priority class name (same as priorityClasses"
                                    f"[{seen[pc.name]}])", pc.name, "unique names", "rename or remove one of them"))
        seen.setdefault(pc.name, i)
        if not PRIORITY_MIN <= pc.value <= PRIORITY_MAX:
            issues.append(SpecIssue(path + ".value", "priority value out of range", pc.value,
                                    f"{PRIORITY_MIN} … {PRIORITY_MAX}",
                                    "use a smaller number; only the order of the values matters"))
    return issues


def _check_namespace(i: int, namespace: str) -> list[SpecIssue]:
    path = path_of(_S, "queues", i, "namespace")
    if _bad_label(namespace):
        return [SpecIssue(path, "not a valid namespace name", namespace, LABEL_RULE,
                          "rename the namespace, e.g. 'team-a'")]
    if namespace in RESERVED_NAMESPACES or namespace.startswith("kube-"):
        return [SpecIssue(path, "namespace is reserved for the system", namespace,
                          f"any valid name except {', '.join(RESERVED_NAMESPACES)} and kube-*",
                          "give the team a namespace of its own (omit it to use the queue name)")]
    return []


# -- quotas -----------------------------------------------------------------------------------------------------
def _check_quotas(sched: SchedulingSpec, known: list[str], caps: dict[str, PoolCapacity]) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    used: dict[str, list[tuple[int, int, str, int]]] = {}
    """pool -> [(queue index, quota index, queue name, gpus)] in config order."""
    for i, queue in enumerate(sched.queues):
        seen: dict[str, int] = {}
        for j, quota in enumerate(queue.quotas):
            q = lambda *rest: path_of(_S, "queues", i, "quotas", j, *rest)  # noqa: E731 - path builder
            if quota.pool not in known:
                issues.append(SpecIssue(q("pool"), "no GPU pool with this name", quota.pool,
                                        allowed_list(known) or "no pools are defined",
                                        choice_fix("the pool", quota.pool, known, " (a name from nodePools)")))
            elif quota.pool in seen:
                issues.append(SpecIssue(q("pool"), f"pool listed twice in this queue (same as quotas[{seen[quota.pool]}])",
                                        quota.pool, "each pool once per queue", "merge the two entries into one"))
            else:
                used.setdefault(quota.pool, []).append((i, j, queue.name, quota.gpus))
            seen.setdefault(quota.pool, j)
            for field, value in (("borrowingLimit", quota.borrowing_limit), ("lendingLimit", quota.lending_limit)):
                if value is not None and sched.cohort is None:
                    verb = "borrowing" if field == "borrowingLimit" else "lending"
                    issues.append(SpecIssue(q(field), f"{verb} happens between queues of a cohort, and "
                                            "scheduling.cohort is not set", value, "a cohort name in scheduling.cohort",
                                            f"set scheduling.cohort (e.g. cohort: ml), or remove {field}"))
            if quota.lending_limit is not None and quota.lending_limit > quota.gpus:
                issues.append(SpecIssue(q("lendingLimit"), "lendingLimit is more than the queue's own quota in this pool",
                                        quota.lending_limit, f"0 … {quota.gpus} (gpus)",
                                        "lower lendingLimit to at most gpus: a queue can only lend what it owns"))
    if not sched.overcommit:
        issues += _check_capacity(used, caps)
    return issues


def _check_capacity(used: dict[str, list[tuple[int, int, str, int]]],
                    caps: dict[str, PoolCapacity]) -> list[SpecIssue]:
    issues = []
    for pool, entries in used.items():
        cap = caps.get(pool)
        total = sum(gpus for *_, gpus in entries)
        if cap is None or total <= cap.max_gpus:
            continue
        i, j = entries[-1][0], entries[-1][1]
        parts = " + ".join(f"{name} {gpus}" for _, _, name, gpus in entries)
        needed = math.ceil(total / cap.gpus_per_node)
        issues.append(SpecIssue(
            path_of(_S, "queues", i, "quotas", j, "gpus"),
            f"nominal quotas in pool {pool} add up to {total} GPUs ({parts}), more than the pool has at maxNodes "
            f"({cap.max_nodes} × {cap.gpus_per_node} = {cap.max_gpus})", total, f"at most {cap.max_gpus} in total",
            f"lower the quotas, raise nodePools[{cap.index}].maxNodes to {needed}, or set scheduling.overcommit: true"))
    return issues


# -- Kueue-only: topology and fair sharing ----------------------------------------------------------------------
def _check_topology(cloud: Cloud, sched: SchedulingSpec, caps: dict[str, PoolCapacity]) -> list[SpecIssue]:
    if sched.topology.mode != TopologyMode.REQUIRED:
        return []
    pools = [caps[p] for p in dict.fromkeys(q.pool for queue in sched.queues for q in queue.quotas) if p in caps]
    issues = []
    autoscaled = [c for c in pools if not is_fixed_size(c.min_nodes, c.max_nodes)]
    if autoscaled:
        names = ", ".join(f"{c.name} ({c.min_nodes}-{c.max_nodes} nodes)" for c in autoscaled)
        issues.append(SpecIssue(
            path_of(_S, "topology", "mode"), f"required placement needs pools of fixed size, and {names} "
            f"{'autoscales' if len(autoscaled) == 1 else 'autoscale'}: "
            "Kueue topology-aware admission counts only nodes that exist, so a gang would wait for a scale-up it "
            "never triggers", "required", "preferred or none (or minNodes = maxNodes on those pools)",
            "use topology.mode: preferred, or set minNodes equal to maxNodes (e.g. on a reservation)"))
    if sched.topology.level == TopologyLevel.BLOCK:
        blockless = [c for c in pools if is_fixed_size(c.min_nodes, c.max_nodes)
                     and not has_block_labels(cloud, c.machine_type)]
        if blockless:
            names = ", ".join(f"{c.name} ({c.machine_type})" for c in blockless)
            issues.append(SpecIssue(
                path_of(_S, "topology", "level"), f"required block placement is impossible on {names}: "
                f"{'GKE' if cloud == Cloud.GCP else 'EKS'} puts no block topology labels on those nodes", "block",
                "zone or host (or topology.mode: preferred)",
                "use level: zone or host, or mode: preferred, or move those quotas to a pool with block labels "
                "(GKE A3/A4, EKS p4d/p5/p6/g6e)"))
    return issues


def _check_fair_share(sched: SchedulingSpec) -> list[SpecIssue]:
    if sched.cohort is not None:
        return []
    return [SpecIssue(path_of(_S, "queues", i, "fairShareWeight"), "fair-sharing weights only matter between "
                      "queues of a cohort; this one is ignored", q.fair_share_weight, "any weight, with a cohort",
                      "set scheduling.cohort, or remove fairShareWeight", warning=True)
            for i, q in enumerate(sched.queues) if q.fair_share_weight != 1]
