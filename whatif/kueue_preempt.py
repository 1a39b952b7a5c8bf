"""Kueue's flavor assignment and preemption for one head workload: the first flavor (pool, in quota order) where it
fits its nominal quota or can borrow from the cohort; else the first where preempting makes room: lower-priority
workloads of its own queue (``withinClusterQueue``), borrowers of the cohort when it reclaims its own nominal quota
(``reclaimWithinCohort``), or, with fair sharing, workloads of queues whose share stays above its own."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from whatif.engine import JobState

if TYPE_CHECKING:
    from whatif.kueue_sched import CQ, KueueScheduler


@dataclass
class Choice:
    pool: str
    borrows: bool
    victims: list[JobState] = field(default_factory=list)


def choose(s: KueueScheduler, cq: CQ, js: JobState) -> Choice | None:
    fallback: Choice | None = None
    for pool in s.pools_for(js):
        need = s.need(js, pool)
        if not _fits_nodes(s, js, pool) or not _topology_fits(s, js, pool):
            continue
        q = cq.model.quotas[pool]
        usage = cq.usage[pool]
        if usage + need <= q.nominal and (s.k.cohort is None or s.cohort_room(cq, pool, need)):
            return Choice(pool, False)  # its own quota, and not lent out to a borrower right now
        over = usage + need - q.nominal
        if (q.borrowing_limit is None or over <= q.borrowing_limit) and s.cohort_room(cq, pool, need):
            return Choice(pool, True)
        if fallback is None:
            victims = _preempt(s, cq, js, pool, need)
            if victims:
                fallback = Choice(pool, usage + need > q.nominal, victims)
    return fallback


def _fits_nodes(s: KueueScheduler, js: JobState, pool: str) -> bool:
    """Kueue counts quota only, but a flavor whose nodes are too small never runs the pods: the job's ResourceFlavor
    node selector and pod requests would leave them Pending, so such a flavor is not a real choice."""
    from whatif.cluster import slices_for
    m = s.eng.pools[pool].model
    return slices_for(m, js.job.gpus_per_node, js.job.gpu_share) <= m.slices_per_node and js.job.nodes <= m.max_nodes


def _topology_fits(s: KueueScheduler, js: JobState, pool: str) -> bool:
    """TAS (fixed-size pools placed by block): Kueue finds the nodes at admission, so they must be free now."""
    state = s.eng.pools[pool]
    if not state.model.block_nodes:
        return True
    from whatif.cluster import slices_for
    return state.place(js.job.nodes, slices_for(state.model, js.job.gpus_per_node, js.job.gpu_share), False) \
        is not None


def _fits_after(s: KueueScheduler, cq: CQ, pool: str, need: int, freed: dict[int, int]) -> bool:
    """Would the workload fit (nominal, or borrowing within limits) once ``freed`` (queue id -> slices) is gone?"""
    q = cq.model.quotas[pool]
    for c in s.cqs.values():
        c.usage[pool] -= freed.get(id(c), 0)
    try:
        usage = cq.usage[pool]
        if usage + need <= q.nominal and (s.k.cohort is None or s.cohort_room(cq, pool, need)):
            return True
        over = usage + need - q.nominal
        return (q.borrowing_limit is None or over <= q.borrowing_limit) and s.cohort_room(cq, pool, need)
    finally:
        for c in s.cqs.values():
            c.usage[pool] += freed.get(id(c), 0)


def _candidates(s: KueueScheduler, cq: CQ, js: JobState, pool: str, need: int) -> list[tuple[CQ, JobState]]:
    within = cq.model.within_queue
    out: list[tuple[CQ, JobState]] = []
    for w in cq.admitted:
        if w.pool is None or w.pool.model.name != pool:
            continue
        if within == "LowerPriority" and w.value < js.value:
            out.append((cq, w))
        elif within == "LowerOrNewerEqualPriority" and (w.value < js.value or
                                                        (w.value == js.value and w.order_ts > js.order_ts)):
            out.append((cq, w))
    if s.k.cohort is None:
        return out
    own_fits = cq.usage[pool] + need <= cq.model.quotas[pool].nominal
    mine = s.share(cq, pool, need)
    for other in s.cqs.values():
        if other is cq or pool not in other.model.quotas:
            continue
        if other.usage[pool] <= other.model.quotas[pool].nominal:
            continue  # only borrowers give back
        for w in other.admitted:
            if w.pool is None or w.pool.model.name != pool:
                continue
            reclaim = own_fits and (cq.model.reclaim == "Any" or
                                    (cq.model.reclaim == "LowerPriority" and w.value < js.value))
            fair = s.k.fair_sharing and s.share(other, pool, -s.need(w, pool)) >= mine
            if reclaim or fair:
                out.append((other, w))
    return out


def _preempt(s: KueueScheduler, cq: CQ, js: JobState, pool: str, need: int) -> list[JobState]:
    """The fewest victims, lowest priority and newest first (from the queue with the highest share first)."""
    cands = _candidates(s, cq, js, pool, need)
    if not cands:
        return []
    shares = {id(c): s.share(c) for c in s.cqs.values()}
    cands.sort(key=lambda c: (c[0] is cq, -shares[id(c[0])], c[1].value, -c[1].order_ts, -c[1].n))
    freed: dict[int, int] = {}
    victims = []
    for owner, w in cands:
        freed[id(owner)] = freed.get(id(owner), 0) + s.need(w, pool)
        victims.append(w)
        if _fits_after(s, cq, pool, need, freed):
            return victims
    return []
