"""One run -> the numbers a reviewer reads: per pool and overall utilization (allocated / paid GPU-hours), idle paid
GPU-hours and their cost, effective $ per used GPU-hour, queue waits (p50/p95/p99) per queue and job-size class,
preemptions and GPU-hours lost, fair-share deviation, and the jobs that can never start. Strict-JSON-ready dicts."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from whatif.cluster import ClusterModel
from whatif.model import DRAIN_LIMIT_S, Job, PoolUsage, SimResult, Workload

SIZE_CLASSES = (
    ("<1 GPU", 0.0, 1.0),
    ("1 GPU", 1.0, 1.0),
    ("2-8 GPUs", 2.0, 8.0),
    ("9-64 GPUs", 9.0, 64.0),
    ("65+ GPUs", 65.0, float("inf")),
)


def size_class(job: Job) -> str:
    g = job.gpus
    if g < 1:
        return SIZE_CLASSES[0][0]
    return next(name for name, lo, hi in SIZE_CLASSES[1:] if lo <= g <= hi)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def wait_stats(waits: Sequence[float], censored: int = 0) -> dict[str, Any]:
    r = lambda v: None if v is None else round(v, 1)  # noqa: E731
    return {
        "jobs": len(waits) + censored,
        "started": len(waits),
        "neverStarted": censored,
        "meanS": r(sum(waits) / len(waits)) if waits else None,
        "p50S": r(percentile(waits, 50)),
        "p95S": r(percentile(waits, 95)),
        "p99S": r(percentile(waits, 99)),
    }


def _money(
    paid_gpu_h: float, alloc_gpu_h: float, lost_gpu_h: float, cost: float | None, idle_cost: float | None
) -> dict[str, Any]:
    """``cost`` None: a pool's price is unknown (reservation-bound A4X), so every $ figure is None, never $0."""
    used = alloc_gpu_h - lost_gpu_h
    return {
        "paidGpuHours": round(paid_gpu_h, 2),
        "allocatedGpuHours": round(alloc_gpu_h, 2),
        "utilization": round(alloc_gpu_h / paid_gpu_h, 4) if paid_gpu_h else None,
        "idleGpuHours": round(paid_gpu_h - alloc_gpu_h, 2),
        "lostGpuHours": round(lost_gpu_h, 2),
        "costUsd": None if cost is None else round(cost, 2),
        "idleCostUsd": None if idle_cost is None else round(idle_cost, 2),
        "effectiveUsdPerUsedGpuHour": round(cost / used, 4) if cost is not None and used > 0 else None,
    }


def _pool_money(u: PoolUsage) -> tuple[float, float, float, float | None, float | None]:
    """(paid GPU-h, allocated GPU-h, lost GPU-h, cost $, idle $) of one pool, unrounded; $ None when unpriced."""
    paid = u.paid_node_s * u.gpus_per_node / 3600
    alloc = u.allocated_gpu_s / 3600
    if u.usd_per_node_hour is None:
        return paid, alloc, u.lost_gpu_s / 3600, None, None
    cost = u.paid_node_s / 3600 * u.usd_per_node_hour
    idle = cost * (1 - alloc / paid) if paid else 0.0
    return paid, alloc, u.lost_gpu_s / 3600, cost, idle


def pool_row(u: PoolUsage) -> dict[str, Any]:
    price = None if u.usd_per_node_hour is None else round(u.usd_per_node_hour / u.gpus_per_node, 4)
    return {"pool": u.pool, "usdPerGpuHour": price, **_money(*_pool_money(u)), "interruptions": u.interruptions}


def _sum(values: Iterable[float | None]) -> float | None:
    listed = list(values)
    return None if any(v is None for v in listed) else sum(v for v in listed if v is not None)


def total_row(pools: Iterable[PoolUsage]) -> dict[str, Any]:
    """Sums of the pools' unrounded figures; idle $ is the sum of each pool's idle $ at its own price (None when a
    pool's price is unknown)."""
    rows = [_pool_money(u) for u in pools]
    if not rows:
        return _money(0.0, 0.0, 0.0, 0.0, 0.0)
    paid, alloc, lost = (sum(r[i] for r in rows) for i in range(3))  # type: ignore[misc]
    return _money(paid, alloc, lost, _sum(r[3] for r in rows), _sum(r[4] for r in rows))


DRAIN_DAYS = f"{DRAIN_LIMIT_S / 86400:g}"
RUN_BILLING = (
    "the run is billed from 0 h to its end, when nothing left can change (the last job has ended, or every "
    "job left can never run again), with the scale-down tails (node autoscaler, Slurm power saving) after "
    "it, whatever --horizon-hours says; a run cut with jobs left that could still run, by --horizon-hours "
    f"or by the what-if's {DRAIN_DAYS}-day drain limit (no job ended or kept work at a checkpoint, and "
    f"none running then could still end, for {DRAIN_DAYS} days: a warning says so), is billed to the cut (nodes still up are paid to it, "
    "no tail). cost $ = paid node-hours × $/node-h; idle $ = (paid - allocated) GPU-h × $/GPU-h; $ per used "
    "GPU-h = cost $ / (allocated - lost) GPU-h; GPU pools only: the control plane and the system pool, "
    "which the preview's cost table adds, are not in these dollars"
)
"""The run's billing convention, the same for every stack (``stacks/plan/billing.py`` bills the pools)."""


def summarize(result: SimResult, cluster: ClusterModel, workload: Workload, seed: int) -> dict[str, Any]:
    counted = [j for j in workload.jobs if j.id not in workload.warm_up]
    never = [
        {"job": j.id, "queue": j.queue, "gpus": j.gpus, "nodes": j.nodes, "reason": result.jobs[j.id].never_startable}
        for j in counted
        if result.jobs[j.id].never_startable
    ]
    pools = [pool_row(u) for u in result.pools.values()]
    total = total_row(result.pools.values())
    return {
        "stack": cluster.stack,
        "scheduler": cluster.scheduler,
        "seed": seed,
        "horizonHours": round(result.horizon_s / 3600, 3),
        "cutBy": result.cut,
        "workload": {
            "name": workload.name,
            "kind": workload.kind,
            "description": workload.description,
            "jobs": len(counted),
            "warmUpJobs": len(workload.warm_up),
            "attribution": workload.attribution,
            "notes": workload.notes,
        },
        "neverStartable": never,
        "pools": pools,
        "total": total,
        "billing": [RUN_BILLING, *(f"pool {p.billing_note}" for p in cluster.pools.values() if p.billing_note)],
        "waits": _waits(result, counted),
        "timeToRunning": _time_to_running(result, cluster, counted),
        "preemptions": {
            "count": result.preemptions,
            "lostGpuHours": total["lostGpuHours"],
            "podsReadyEvictions": result.pods_ready_evictions,
        },
        "timeLimitKills": {why: len(ids) for why, ids in sorted(result.time_limit_kills.items())},
        "warnings": list(result.warnings),
        "fairShare": _fair_share(result, cluster),
        "unfinished": sum(
            1 for j in counted if result.jobs[j.id].end_s is None and not result.jobs[j.id].never_startable
        ),
        "assumptions": cluster.sources,
    }


def _waits(result: SimResult, counted: Iterable[Job]) -> dict[str, Any]:
    by_queue: dict[str, list[float]] = {}
    by_size: dict[str, list[float]] = {}
    censored_q: dict[str, int] = {}
    censored_s: dict[str, int] = {}
    every: list[float] = []
    for j in counted:
        o = result.jobs[j.id]
        if o.never_startable:
            continue
        q, s = j.queue, size_class(j)
        by_queue.setdefault(q, [])
        by_size.setdefault(s, [])
        if o.start_s is None:
            censored_q[q] = censored_q.get(q, 0) + 1
            censored_s[s] = censored_s.get(s, 0) + 1
            continue
        w = o.start_s - j.submit_s
        by_queue[q].append(w)
        by_size[s].append(w)
        every.append(w)
    order = [c[0] for c in SIZE_CLASSES]
    return {
        "all": wait_stats(every, sum(censored_q.values())),
        "byQueue": {q: wait_stats(v, censored_q.get(q, 0)) for q, v in sorted(by_queue.items())},
        "bySize": {s: wait_stats(by_size[s], censored_s.get(s, 0)) for s in order if s in by_size},
    }


def _time_to_running(result: SimResult, cluster: ClusterModel, counted: Iterable[Job]) -> dict[str, Any]:
    """Submit to all pods running (queue wait + image pull + admission, scheduling and pod start), per job size."""
    cold = {name: p.cold_range for name, p in cluster.pools.items() if p.cold_range is not None}
    if cluster.scheduler == "slurm":
        return {
            "bySize": {},
            "coldStartByPool": cold,
            "note": "Slurm jobs start in running slurmd pods: the queue wait is the time to running",
        }
    by_size: dict[str, list[float]] = {}
    for j in counted:
        o = result.jobs[j.id]
        if o.running_s is not None:
            by_size.setdefault(size_class(j), []).append(o.running_s - j.submit_s)
    r = lambda v: None if v is None else round(v, 1)  # noqa: E731
    order = [c[0] for c in SIZE_CLASSES]
    return {
        "bySize": {
            s: {"jobs": len(by_size[s]), "p50S": r(percentile(by_size[s], 50)), "p95S": r(percentile(by_size[s], 95))}
            for s in order
            if s in by_size
        },
        "coldStartByPool": cold,
        "note": "node provisioning, image pull and pod start from catalog/data/start-path.csv (override with "
        "--assume NAME=VALUE), at their typical values; a job's run time starts once all its pods run (its GPUs "
        "are held, and paid, from placement)",
    }


def _fair_share(result: SimResult, cluster: ClusterModel) -> list[dict[str, Any]]:
    total_w = sum(q.weight for q in cluster.queues.values()) or 1
    used = sum(result.queue_gpu_s.values())
    rows = []
    for q in cluster.queues.values():
        share = result.queue_gpu_s.get(q.name, 0.0) / used if used else 0.0
        rows.append(
            {
                "queue": q.name,
                "weight": q.weight,
                "weightShare": round(q.weight / total_w, 4),
                "usedShare": round(share, 4),
                "usedGpuHours": round(result.queue_gpu_s.get(q.name, 0.0) / 3600, 2),
                "deviation": round(share - q.weight / total_w, 4),
            }
        )
    return rows


def waits_of(result: SimResult, workload: Workload) -> dict[str, list[float]]:
    """Queue -> simulated waits of the counted jobs that started (for the CDF chart)."""
    out: dict[str, list[float]] = {}
    for j in workload.jobs:
        o = result.jobs[j.id]
        if j.id in workload.warm_up or o.start_s is None:
            continue
        out.setdefault(j.queue, []).append(o.start_s - j.submit_s)
    return out
