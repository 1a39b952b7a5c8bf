"""Slurm's backfill pass, as configured by the rendered ``SchedulerParameters``: every ``bf_interval`` it walks the
pending jobs in priority order (at most ``bf_max_job_test``), starts each one that can run now without delaying an
earlier job's reservation, and reserves nodes for the others at their earliest start within ``bf_window`` (planned
with time limits, on a ``bf_resolution`` grid: a reservation starts at its planned start rounded down and ends
rounded up).

Two shortcuts keep a week of a 512-GPU cluster within seconds, both exact for small job lists: a pass only plans
reservations for the first ``RESERVED_JOBS`` jobs that cannot start now (Slurm plans one for every job it tests), and
a job is not tested again in a pass once a job on the same pools with no larger shape and time limit failed to start
(reservations only grow within a pass, so it would fail too)."""

from __future__ import annotations

import math
from typing import Any, Protocol

from whatif.cluster import SlurmModel, slices_for
from whatif.core import PENDING, Host
from whatif.nodes import UP, Node, PoolState, pick_in_blocks
from whatif.slurm.job import SlurmJob


class SlurmScheduler(Protocol):
    """What the backfill pass uses of ``slurm_sched.SlurmScheduler`` (named here so the two modules form no circle)."""

    m: SlurmModel
    eng: Host
    queue: list[SlurmJob]
    running: list[SlurmJob]

    def shape(self, js: SlurmJob) -> tuple: ...
    def pools_of(self, js: SlurmJob) -> list[PoolState]: ...
    def over_cap(self, js: SlurmJob, pool: PoolState) -> bool: ...
    def start(self, js: SlurmJob, pool: PoolState, chosen: list[Node], backfilled: bool, now: float) -> None: ...
    def holding(self) -> list[SlurmJob]: ...


RESERVED_JOBS = 64
Busy = dict[int, list[tuple[float, float, int]]]
"""id(node) -> (start, end, slices) of running jobs (until their time limit) and reservations."""


def backfill(sched: SlurmScheduler, now: float) -> None:
    m = sched.m
    res = m.bf_resolution_s
    horizon = now + m.bf_window_s
    _test_whole_node(sched, now)
    if not _any_fits_now(sched):
        return
    busy: Busy = {}
    for js in sched.running + sched.holding():  # running, and holding nodes that are resuming
        end = max(now, js.start + js.job.limit_s)  # a running job's end as it is (not on the grid: real Slurm
        for node, take in js.alloc:  # 26.05 kept a 1-min job out of a hole ending 34 s later)
            busy.setdefault(id(node), []).append((now, end, take))
    failed: dict[tuple, float] = {}
    reserved = tested = 0
    for js in list(sched.queue):
        if tested >= m.bf_max_job_test:
            break
        if js.state != PENDING or js.eligible > now:
            continue
        tested += 1
        shape = sched.shape(js)
        if js.job.limit_s >= failed.get(shape, math.inf):
            continue
        pools = [p for p in sched.pools_of(js) if not sched.over_cap(js, p)]
        if not pools:
            failed[shape] = min(failed.get(shape, math.inf), js.job.limit_s)  # capped now: so are its twins
            continue
        if not any(n.free > 0 for p in pools for n in p.nodes if n.state == UP):
            continue  # nothing free now on its nodes: it cannot start, and no reservation there matters this pass
        limit = horizon if reserved < RESERVED_JOBS else now
        best: tuple[float, PoolState, list[Node]] | None = None
        for pool in pools:
            found = earliest(pool, js, busy, now, limit, res)
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], pool, found[1])
        if best is None or best[0] > now:
            failed[shape] = min(failed.get(shape, math.inf), js.job.limit_s)
        if best is None:
            continue
        t, pool, chosen = best
        take = (
            pool.model.slices_per_node
            if pool.model.exclusive
            else slices_for(pool.model, js.job.gpus_per_node, js.job.gpu_share)
        )
        # A reservation's slot, as Slurm 26.05 sets it (src/plugins/sched/backfill/backfill.c, slurm-26-05-3-1,
        # _set_slot_time l.1906-1913): the planned start rounded DOWN to the grid, the end (from the exact start) up.
        # The floored start can hold the nodes before the job could run, and keep a shorter job out of them.
        end = _up(t + js.job.limit_s, now, res)
        for node in chosen:
            busy.setdefault(id(node), []).append((_down(t, res), end, take))
        if t <= now:
            sched.start(js, pool, chosen, True, now)
        else:
            reserved += 1


def _test_whole_node(sched: SlurmScheduler, now: float) -> None:
    """Slurm's backfill tests every pending job it walks, even when nothing is free, and on an exclusive partition
    that will-run test leaves the job's ``total_cpus`` at its whole nodes' CPUs (backfill.c l.3180, job_test.c
    l.2195-2207), which the size factor then uses. The jobs walked: the first ``bf_max_job_test`` eligible ones (a
    job with no start in ``bf_window`` fails its test in Slurm; the what-if counts it as tested)."""
    tested = 0
    for js in sched.queue:
        if tested >= sched.m.bf_max_job_test:
            return
        if js.state != PENDING or js.eligible > now:
            continue
        tested += 1
        if js.total_cpus == 0:
            pools = sched.pools_of(js)
            if pools and pools[0].model.exclusive:
                js.total_cpus = float(js.job.nodes * pools[0].model.cpus_per_node)


def _any_fits_now(sched: SlurmScheduler) -> bool:
    """Could any pending job fit the free nodes now, reservations aside? If not, the pass can start nothing."""
    free: dict[str, list[int]] = {
        name: sorted((n.free for n in p.nodes if n.state == UP and n.free > 0), reverse=True)
        for name, p in sched.eng.pools.items()
    }
    if not any(free.values()):
        return False
    seen: set[tuple] = set()
    for js in sched.queue:
        shape = sched.shape(js)
        if shape in seen:
            continue
        seen.add(shape)
        for pool in sched.pools_of(js):
            m = pool.model
            need = m.slices_per_node if m.exclusive else slices_for(m, js.job.gpus_per_node, js.job.gpu_share)
            f = free[m.name]
            if len(f) >= js.job.nodes and f[js.job.nodes - 1] >= need:
                return True
    return False


def _down(t: float, res: float) -> float:
    """Round a reservation's planned start down to the bf_resolution grid. Before ``now`` it holds the nodes from now
    on, as Slurm's ``MAX(start_time, node_space[0].begin_time)`` (backfill.c l.4106) does."""
    return math.floor(t / res) * res


def _up(t: float, now: float, res: float) -> float:
    """Round a planned time up to the bf_resolution grid (never before now)."""
    return max(now, math.ceil(t / res) * res)


def free_over(node: Node, spans: list[tuple[float, float, int]], a: float, b: float) -> int:
    """Slices of ``node`` free during the whole of [a, b], a span starting exactly at ``b`` counting as overlapping:
    Slurm tests a candidate against a reservation with ``begin_time <= end_time`` (backfill.c l.3015-3017, l.3090,
    slurm-26-05-3-1), so a job ending as a reservation starts is kept out of it. A span ending at ``a`` does not
    overlap (``end_time <= start_time`` is skipped)."""
    if not spans:
        return node.cap
    for s, e, _ in spans:  # fast path: nothing overlaps
        if s <= b and e > a:
            break
    else:
        return node.cap
    used = 0
    for p in [a] + [s for s, _, _ in spans if a < s <= b]:
        at = 0
        for s, e, take in spans:
            if s <= p < e:
                at += take
        used = max(used, at)
    return node.cap - used


def node_earliest(
    node: Node, spans: list[tuple[float, float, int]], need: int, length: float, now: float, limit: float
) -> float | None:
    """Earliest t in [now, limit] with ``need`` slices free on the node over [t, t + length)."""
    if need >= node.cap:  # a whole node: the first gap of ``length`` between spans
        t = now
        for s, e, _ in sorted(spans):
            if s > t + length:  # a span starting at t + length overlaps (free_over)
                break
            t = max(t, e)
        return t if t <= limit else None
    for t in sorted({now, *(e for _, e, _ in spans if now < e <= limit)}):
        if free_over(node, spans, t, t + length) >= need:
            return t
    return None


def earliest(
    pool: PoolState, js: SlurmJob, busy: Busy, now: float, limit: float, res: float
) -> tuple[float, list[Node]] | None:
    """Earliest start in [now, limit] where the job's nodes are free for its whole time limit, and those nodes."""
    job, model = js.job, pool.model
    need = model.slices_per_node if model.exclusive else slices_for(model, job.gpus_per_node, job.gpu_share)
    starts: list[tuple[float, Node]] = []
    for n in pool.nodes:
        if n.state != UP:
            continue
        t = node_earliest(n, busy.get(id(n), []), need, job.limit_s, now, limit)
        if t is not None:
            starts.append((t, n))
    if len(starts) < job.nodes:
        return None
    starts.sort(key=lambda x: (x[0], x[1].index))
    first = starts[job.nodes - 1][0]
    # The joint start is the first time enough nodes are free together for the whole limit: the n-th node's own
    # earliest start, or a later end of a span on a node that was free earlier but is reserved then (checking only
    # the nodes' own earliest starts would miss it and leave a multi-node job without its reservation).
    ends = {e for t, n in starts for _, e, _ in busy.get(id(n), []) if first < e <= limit}
    for t in sorted({t for t, _ in starts[job.nodes - 1 :]} | ends):
        ok = [n for s, n in starts if s <= t and free_over(n, busy.get(id(n), []), t, t + job.limit_s) >= need]
        chosen = _choose(model, ok, job.nodes, need, busy, t, t + job.limit_s)
        if chosen is not None:
            return t, chosen
    return None


def _choose(model: Any, ok: list[Node], nodes: int, need: int, busy: Busy, a: float, b: float) -> list[Node] | None:
    if len(ok) < nodes:
        return None
    if model.block_nodes and nodes > 1:
        chosen = pick_in_blocks(ok, nodes, model.block_nodes, model.max_nodes)
        return chosen if chosen is not None or model.block_required else ok[:nodes]
    if nodes == 1:  # best fit, as the main scheduler
        return [min(ok, key=lambda n: (free_over(n, busy.get(id(n), []), a, b), n.index))]
    return sorted(ok, key=lambda n: n.index)[:nodes]
