"""Slurm's backfill pass, as configured by the rendered ``SchedulerParameters``: every ``bf_interval`` it walks the
pending jobs in priority order (at most ``bf_max_job_test``), starts each one that can run now without delaying an
earlier job's reservation, and reserves nodes for the others at their earliest start within ``bf_window`` (planned
with time limits, on a ``bf_resolution`` grid)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from whatif.cluster import slices_for
from whatif.engine import PENDING, JobState
from whatif.nodes import UP, Node, PoolState, pick_in_blocks

if TYPE_CHECKING:
    from whatif.slurm_sched import SlurmScheduler

Busy = dict[int, list[tuple[float, float, int]]]
"""id(node) -> (start, end, slices) of running jobs (until their time limit) and reservations."""


def backfill(sched: SlurmScheduler, now: float) -> None:
    m = sched.m
    res = m.bf_resolution_s
    horizon = now + m.bf_window_s
    busy: Busy = {}
    for js in sched.running:
        end = _up(js.start + js.job.limit_s, now, res)
        for node, take in js.alloc:
            busy.setdefault(id(node), []).append((now, end, take))
    tested = 0
    for js in list(sched.queue):
        if tested >= m.bf_max_job_test:
            break
        if js.state != PENDING:
            continue
        pools = [p for p in sched.pools_of(js) if not sched.over_cap(js, p)]
        tested += 1
        if not pools or not any(n.free > 0 for p in pools for n in p.nodes if n.state == UP):
            continue  # nothing free now on its nodes: it cannot start, and no reservation matters this pass
        best: tuple[float, PoolState, list[Node]] | None = None
        for pool in pools:
            found = earliest(pool, js, busy, now, horizon, res)
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], pool, found[1])
        if best is None:
            continue
        t, pool, chosen = best
        take = pool.model.slices_per_node if pool.model.exclusive else \
            slices_for(pool.model, js.job.gpus_per_node, js.job.gpu_share)
        end = _up(t + js.job.limit_s, now, res)
        for node in chosen:
            busy.setdefault(id(node), []).append((t, end, take))
        if t <= now:
            sched.start(js, pool, chosen, True, now)


def _up(t: float, now: float, res: float) -> float:
    """Round a planned time up to the bf_resolution grid (never before now)."""
    return max(now, math.ceil(t / res) * res)


def free_over(node: Node, busy: Busy, a: float, b: float) -> int:
    """Slices of ``node`` free during the whole of [a, b)."""
    spans = busy.get(id(node))
    if not spans:
        return node.cap
    points = [a] + [s for s, _, _ in spans if a < s < b]
    used = 0
    for p in points:
        at = 0
        for s, e, take in spans:
            if s <= p < e:
                at += take
        used = max(used, at)
    return node.cap - used


def earliest(pool: PoolState, js: JobState, busy: Busy, now: float, horizon: float,
             res: float) -> tuple[float, list[Node]] | None:
    """Earliest start in [now, horizon] where the job's nodes are free for its whole time limit, and those nodes."""
    job, model = js.job, pool.model
    need = model.slices_per_node if model.exclusive else slices_for(model, job.gpus_per_node, job.gpu_share)
    up = [n for n in pool.nodes if n.state == UP]
    if len(up) < job.nodes:
        return None
    times = {now}
    for n in up:
        for _, e, _ in busy.get(id(n), ()):
            if now < e <= horizon:
                times.add(e)
    for t in sorted(times):
        end = t + job.limit_s
        ok = [n for n in up if free_over(n, busy, t, end) >= need]
        if len(ok) < job.nodes:
            continue
        if model.block_nodes and job.nodes > 1:
            chosen = pick_in_blocks(ok, job.nodes, model.block_nodes, model.max_nodes)
            if chosen is None and not model.block_required:
                chosen = ok[:job.nodes]
        elif job.nodes == 1:
            chosen = [min(ok, key=lambda n: (free_over(n, busy, t, end), n.index))]
        else:
            chosen = ok[:job.nodes]
        if chosen is not None:
            return t, chosen
    return None
