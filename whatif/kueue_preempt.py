"""Kueue's flavor assignment and preemption for one head workload, on a cohort snapshot (``kueue_cohort.py``): the
first flavor (pool, in quota order) where it fits its nominal quota or can borrow from the cohort; else the first where
preempting makes room: lower-priority workloads of its own queue (``withinClusterQueue``), borrowers of the cohort when
it reclaims its own nominal quota (``reclaimWithinCohort``), or, with fair sharing, workloads of queues whose share
stays above its own."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from whatif.kueue_cohort import Admitted, CohortView, Incoming, QueueView


@dataclass
class Choice:
    pool: str
    borrows: bool
    victims: list[Admitted] = field(default_factory=list)


def choose(view: CohortView, inc: Incoming, nodes_fit: Callable[[str], bool]) -> Choice | None:
    """``nodes_fit(flavor)``: can the flavor's nodes ever hold the workload (and, on TAS flavors, now)?"""
    q = view.queues[inc.queue]
    fallback: Choice | None = None
    for pool, need in inc.need.items():
        if not nodes_fit(pool):
            continue
        fits, borrows = view.fits_quota(q, pool, need)
        if fits:
            return Choice(pool, borrows)
        if fallback is None:
            victims = _preempt(view, q, inc, pool, need)
            if victims:
                fallback = Choice(pool, q.usage[pool] + need > q.model.quotas[pool].nominal, victims)
    return fallback


def _fits_after(view: CohortView, q: QueueView, pool: str, need: int, gone: list[Admitted]) -> bool:
    """Would the workload fit (nominal, or borrowing within limits) once ``gone`` is evicted?"""
    for w in gone:
        view.queues[w.queue].usage[w.flavor] -= w.slices
    try:
        return view.fits_quota(q, pool, need)[0]
    finally:
        for w in gone:
            view.queues[w.queue].usage[w.flavor] += w.slices


def _candidates(view: CohortView, q: QueueView, inc: Incoming, pool: str, need: int) -> list[Admitted]:
    within = q.model.within_queue
    out: list[Admitted] = []
    for w in q.admitted.values():
        if w.flavor != pool:
            continue
        if within == "LowerPriority" and w.priority < inc.priority:
            out.append(w)
        elif within == "LowerOrNewerEqualPriority" and (w.priority < inc.priority or
                                                        (w.priority == inc.priority and w.order_ts > inc.order_ts)):
            out.append(w)
    if not view.in_cohort:
        return out
    own_fits = q.usage[pool] + need <= q.model.quotas[pool].nominal
    mine = view.share(q, pool, need)
    for other in view.queues.values():
        if other is q or pool not in other.model.quotas:
            continue
        if other.usage[pool] <= other.model.quotas[pool].nominal:
            continue  # only borrowers give back
        for w in other.admitted.values():
            if w.flavor != pool:
                continue
            reclaim = own_fits and (q.model.reclaim == "Any" or
                                    (q.model.reclaim == "LowerPriority" and w.priority < inc.priority))
            fair = view.kueue.fair_sharing and view.share(other, pool, -w.slices) >= mine
            if reclaim or fair:
                out.append(w)
    return out


def _preempt(view: CohortView, q: QueueView, inc: Incoming, pool: str, need: int) -> list[Admitted]:
    """The fewest victims, lowest priority and newest first (from the queue with the highest share first)."""
    cands = _candidates(view, q, inc, pool, need)
    if not cands:
        return []
    shares = {name: view.share(c) for name, c in view.queues.items()}
    cands.sort(key=lambda w: (w.queue == q.model.name, -shares[w.queue], w.priority, -w.order_ts, -w.n))
    victims: list[Admitted] = []
    for w in cands:
        victims.append(w)
        if _fits_after(view, q, pool, need, victims):
            return victims
    return []
