"""Rules of the shared scheduling section that span fields or need the pools (both workloads; Kueue-only rules marked).

Each check reports into an ``Issues`` scope (config path, the value, what is allowed and the fix); none raises. Slurm-only
rules live in the Slurm engineer's own module; the Kueue-only placement and fair-sharing rules in ``kueue_placement.py``,
the pools' GPU capacity they weigh in ``pool_gpus.py``.
"""

from __future__ import annotations

import math
import re
from typing import Any

from catalog import Catalog, Cloud
from stacks.validate.issues import Issues, allowed_list, choice_fix
from stacks.validate.kueue_placement import check_borrow_within_cohort, check_fair_share, check_required_topology
from stacks.validate.pool_gpus import PoolCapacity, pool_capacities
from stacks.spec.scheduling import SchedulingSpec, TopologyLevel, TopologyMode, Workload
from stacks.spec.stack import NodePool

DNS_1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LABEL_RULE = (
    "a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit"
)
RESERVED_NAMESPACES = ("default", "kueue-system", "kubeflow-system", "kubeflow")
"""Plus every ``kube-*`` namespace: system namespaces and the ones gpu-cluster installs into."""
PRIORITY_MIN, PRIORITY_MAX = -2_147_483_648, 1_000_000_000
"""Kueue WorkloadPriorityClass values are int32; above 1e9 Kubernetes reserves priorities for system components."""


def check_scheduling(
    issues: Issues,
    cat: Catalog,
    cloud: Cloud | None,
    raw_pools: Any,
    pools: list[tuple[int, NodePool]],
    sched: SchedulingSpec,
) -> None:
    """Every cross-field rule of ``gpu-cluster:scheduling``; ``raw_pools`` is the unparsed ``nodePools`` value, so a
    pool that failed its own checks is still a known name (it is reported once, where it is wrong)."""
    known = (
        [p["name"] for p in raw_pools if isinstance(p, dict) and isinstance(p.get("name"), str)]
        if isinstance(raw_pools, list)
        else []
    )
    caps = pool_capacities(cat, cloud, pools)
    scheduling = issues.at("scheduling")
    _check_names(scheduling, sched)
    _check_quotas(scheduling, sched, known, caps)
    if cloud is not None:
        _check_nvlink_level(scheduling.at("topology"), cat, cloud, sched, caps)
    if sched.workload == Workload.KUBEFLOW and cloud is not None:
        check_required_topology(scheduling.at("topology"), cloud, sched, caps)
        check_fair_share(scheduling.at("queues"), sched)
        check_borrow_within_cohort(scheduling, sched)
    if sched.workload == Workload.SLURM:
        _check_no_queued_pools(scheduling, sched, caps)
    if sched.workload != Workload.KUBEFLOW and "kubeflow" in sched.model_fields_set:
        scheduling.error(
            "kubeflow",
            "Kubeflow settings apply only to workload kubeflow",
            sched.kubeflow.model_dump(by_alias=True),
            allowed="workload: kubeflow",
            fix="remove scheduling.kubeflow, or set scheduling.workload: kubeflow",
        )


# -- names ------------------------------------------------------------------------------------------------------
def _bad_label(name: str) -> bool:
    return len(name) > 63 or not DNS_1123_LABEL.fullmatch(name)


def _check_names(scheduling: Issues, sched: SchedulingSpec) -> None:
    if sched.cohort is not None and _bad_label(sched.cohort):
        scheduling.error(
            "cohort", "not a valid cohort name", sched.cohort, allowed=LABEL_RULE, fix="rename the cohort, e.g. 'ml'"
        )
    seen: dict[str, int] = {}
    for i, queue in enumerate(sched.queues):
        where = scheduling.at("queues", i)
        if _bad_label(queue.name):
            where.error(
                "name", "not a valid queue name", queue.name, allowed=LABEL_RULE, fix="rename the queue, e.g. 'team-a'"
            )
        norm = queue.name.lower().replace("_", "-")
        if norm in seen:
            where.error(
                "name",
                f"duplicate queue name (same as queues[{seen[norm]}])",
                queue.name,
                allowed="unique queue names",
                fix="rename one of the queues",
            )
        seen.setdefault(norm, i)
        if queue.namespace is not None:
            _check_namespace(where.at("namespace"), queue.namespace)
    seen = {}
    for i, pc in enumerate(sched.priority_classes):
        where = scheduling.at("priorityClasses", i)
        if _bad_label(pc.name):
            where.error(
                "name",
                "not a valid priority class name",
                pc.name,
                allowed=LABEL_RULE,
                fix="rename the class, e.g. 'high'",
            )
        if pc.name in seen:
            where.error(
                "name",
                f"duplicate priority class name (same as priorityClasses[{seen[pc.name]}])",
                pc.name,
                allowed="unique names",
                fix="rename or remove one of them",
            )
        seen.setdefault(pc.name, i)
        if not PRIORITY_MIN <= pc.value <= PRIORITY_MAX:
            where.error(
                "value",
                "priority value out of range",
                pc.value,
                allowed=f"{PRIORITY_MIN} … {PRIORITY_MAX}",
                fix="use a smaller number; only the order of the values matters",
            )


def _check_namespace(where: Issues, namespace: str) -> None:
    if _bad_label(namespace):
        where.error(
            None, "not a valid namespace name", namespace, allowed=LABEL_RULE, fix="rename the namespace, e.g. 'team-a'"
        )
    elif namespace in RESERVED_NAMESPACES or namespace.startswith("kube-"):
        where.error(
            None,
            "namespace is reserved for the system",
            namespace,
            allowed=f"any valid name except {', '.join(RESERVED_NAMESPACES)} and kube-*",
            fix="give the team a namespace of its own (omit it to use the queue name)",
        )


# -- quotas -----------------------------------------------------------------------------------------------------
QuotaUse = tuple[int, int, str, int]
"""(queue index, quota index, queue name, gpus) of one quota in a pool."""


def _check_quotas(scheduling: Issues, sched: SchedulingSpec, known: list[str], caps: dict[str, PoolCapacity]) -> None:
    used: dict[str, list[QuotaUse]] = {}
    """pool -> its quotas in config order."""
    for i, queue in enumerate(sched.queues):
        seen: dict[str, int] = {}
        for j, quota in enumerate(queue.quotas):
            where = scheduling.at("queues", i, "quotas", j)
            if quota.pool not in known:
                where.error(
                    "pool",
                    "no GPU pool with this name",
                    quota.pool,
                    allowed=allowed_list(known) or "no pools are defined",
                    fix=choice_fix("the pool", quota.pool, known, " (a name from nodePools)"),
                )
            elif quota.pool in seen:
                where.error(
                    "pool",
                    f"pool listed twice in this queue (same as quotas[{seen[quota.pool]}])",
                    quota.pool,
                    allowed="each pool once per queue",
                    fix="merge the two entries into one",
                )
            else:
                used.setdefault(quota.pool, []).append((i, j, queue.name, quota.gpus))
            seen.setdefault(quota.pool, j)
            for field, value in (("borrowingLimit", quota.borrowing_limit), ("lendingLimit", quota.lending_limit)):
                if value is not None and sched.cohort is None:
                    verb = "borrowing" if field == "borrowingLimit" else "lending"
                    where.error(
                        field,
                        f"{verb} happens between queues of a cohort, and scheduling.cohort is not set",
                        value,
                        allowed="a cohort name in scheduling.cohort",
                        fix=f"set scheduling.cohort (e.g. cohort: ml), or remove {field}",
                    )
            if quota.lending_limit is not None and quota.lending_limit > quota.gpus:
                where.error(
                    "lendingLimit",
                    "lendingLimit is more than the queue's own quota in this pool",
                    quota.lending_limit,
                    allowed=f"0 … {quota.gpus} (gpus)",
                    fix="lower lendingLimit to at most gpus: a queue can only lend what it owns",
                )
    if not sched.overcommit:
        _check_capacity(scheduling, used, caps)


def _check_capacity(scheduling: Issues, used: dict[str, list[QuotaUse]], caps: dict[str, PoolCapacity]) -> None:
    for pool, entries in used.items():
        cap = caps.get(pool)
        total = sum(gpus for *_, gpus in entries)
        if cap is None or total <= cap.max_gpus:
            continue
        i, j = entries[-1][0], entries[-1][1]
        parts = " + ".join(f"{name} {gpus}" for _, _, name, gpus in entries)
        needed = math.ceil(total / cap.gpus_per_node)
        if cap.reservation is None:
            fix = (
                f"lower the quotas, raise nodePools[{cap.index}].maxNodes to {needed}, or set "
                "scheduling.overcommit: true"
            )
        else:  # the pool cannot grow past its reservation: raising maxNodes would only add nodes that never come
            fix = (
                f"lower the quotas to {cap.max_gpus} GPUs in total, or set scheduling.overcommit: true (pool "
                f"'{pool}' consumes {cap.reservation}; it grows only with a larger reservation)"
            )
        scheduling.error(
            ("queues", i, "quotas", j, "gpus"),
            f"nominal quotas in pool '{pool}' add up to {total} GPUs ({parts}), more than the pool has at maxNodes "
            f"(nodePools[{cap.index}].maxNodes: {cap.max_nodes} × {cap.gpus_per_node} = {cap.max_gpus})",
            total,
            allowed=f"at most {cap.max_gpus} in total",
            fix=fix,
        )


def _check_nvlink_level(
    topology: Issues, cat: Catalog, cloud: Cloud, sched: SchedulingSpec, caps: dict[str, PoolCapacity]
) -> None:
    """``level: nvlink`` names a rack-scale NVLink domain (GB200 NVL72); a pool without one has no such level."""
    if sched.topology.level != TopologyLevel.NVLINK or sched.topology.mode == TopologyMode.NONE:
        return
    used = [caps[p] for p in dict.fromkeys(q.pool for queue in sched.queues for q in queue.quotas) if p in caps]
    plain = [c for c in used if (cloud, c.machine_type) not in cat.nvlink_domains]
    if plain:
        names = ", ".join(f"{c.name} ({c.machine_type})" for c in plain)
        racks = ", ".join(sorted(m for (c, m) in cat.nvlink_domains if c == cloud))
        topology.error(
            "level",
            f"nvlink placement needs rack-scale NVLink pools, and the NVLink domain of {names} ends at the node",
            "nvlink",
            allowed=f"host, block or zone; or pools of {racks}",
            fix="use level: block (or host), or move those quotas to a GB200 NVL72 pool",
        )


# -- Slurm-only -----------------------------------------------------------------------------------------------
def _check_no_queued_pools(scheduling: Issues, sched: SchedulingSpec, caps: dict[str, PoolCapacity]) -> None:
    """Slurm creates no ProvisioningRequests, so a queued pool's nodes would never come."""
    for i, queue in enumerate(sched.queues):
        for j, quota in enumerate(queue.quotas):
            cap = caps.get(quota.pool)
            if cap is not None and cap.queued:
                scheduling.error(
                    ("queues", i, "quotas", j, "pool"),
                    f"pool {cap.name} gets nodes only through "
                    "ProvisioningRequests, which Kueue creates and Slurm does not",
                    quota.pool,
                    allowed="pools without queued provisioning (workload: slurm)",
                    fix=f"use workload: kubeflow, or set nodePools[{cap.index}].capacity."
                    "queuedProvisioning: false (GKE: a capacity type other than flex-start)",
                )
