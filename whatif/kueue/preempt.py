"""Kueue's flavor assignment and preemption for one head workload, on a cohort snapshot (``kueue_cohort.py``), as
Kueue v0.19.2 does it (pkg/scheduler/preemption: preemption.go, classical/, fairsharing/, common/):

- the first flavor (pool, in quota order) where the workload fits, borrowing if it must; else the first flavor where
  preemption finds victims;
- candidates: lower-priority (or newer equal-priority) workloads of its own queue per ``withinClusterQueue``; workloads
  of borrowing queues in the cohort per ``reclaimWithinCohort`` (Never / LowerPriority / Any), with or without fair
  sharing; ordered as Kueue orders them (other queues first, lower priority first, most recently admitted first);
- classical: remove candidates in that order until the workload fits (honouring ``borrowWithinCohort``), then add back
  every victim not needed (the fill-back step), so the victim set is minimal;
- fair sharing: the queue with the largest dominant resource share gives first, each candidate must pass the first
  configured strategy (``LessThanOrEqualToFinalShare`` or ``LessThanInitialShare``), the second strategy retries
  what the first skipped, then the fill-back step; a queue within its nominal quota reclaims regardless of shares;
- on topology-placed (TAS) flavors "fits" also means the nodes hold the gang once the victims are gone.

Quantities are one resource per flavor (the rendered ClusterQueues quota GPUs or GPU slices)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

from whatif.kueue.cohort import Admitted, CohortView, Incoming, QueueView

HIER, WITHOUT_BORROWING, WHILE_BORROWING, WITHIN = "hierarchical", "without-borrowing", "while-borrowing", "within"


@dataclass
class Choice:
    pool: str
    borrows: bool
    victims: list[Admitted] = field(default_factory=list)
    mode: str = "fit"
    """``fit``, ``reclaim`` (victims only in other queues), ``preempt`` (some in its own queue) or ``no-candidates``
    (preemption could make room but finds no victim: not admissible, see ``kueue_cycle``)."""


NO_CANDIDATES = "no-candidates"
_RANK = {"fit": 3, "reclaim": 2, "preempt": 1, NO_CANDIDATES: 0}


def choose(view: CohortView, inc: Incoming, nodes_fit: Callable[[str], bool]) -> Choice | None:
    """Kueue's flavor assignment (flavorassigner.go, default fungibility: ``whenCanBorrow: MayStopSearch``,
    ``whenCanPreempt: TryNextFlavor``): the first flavor where the workload fits (borrowing or not) ends the search;
    otherwise the best preemption flavor: victims before none, reclaim before priority preemption, less borrowing,
    then flavor order. Preemption is tried on a flavor only where it could make room: the request within the
    queue's nominal quota, or ``borrowWithinCohort`` (fair sharing: ``reclaimWithinCohort``) allowing it while
    borrowing, and never above what the queue could ever get. ``nodes_fit(flavor)``: can the flavor's nodes ever
    hold the workload (node size, node count)? None: no flavor (NoFit)."""
    q = view.queues[inc.queue]
    best: Choice | None = None
    borrowing_fit: Choice | None = None  # whenCanBorrow: TryNextFlavor keeps looking for a fit without borrowing
    for pool, need in inc.need.items():
        if not nodes_fit(pool):
            continue
        fits, borrows = view.fits_quota(q, pool, need)
        if fits and _topology_ok(view, pool, need, []):
            if not borrows or q.model.when_can_borrow == "MayStopSearch":
                return Choice(pool, borrows)
            borrowing_fit = borrowing_fit or Choice(pool, borrows)
            continue
        if not _may_preempt(view, q, pool, need):
            continue
        victims = targets(view, inc, pool, need)
        if victims:
            mode = "preempt" if any(w.queue == inc.queue for w in victims) else "reclaim"
            option = Choice(pool, _borrows_after(view, q, pool, need, victims), victims, mode)
        else:
            option = Choice(pool, view.borrowing(q, pool, need), [], NO_CANDIDATES)
        if best is None or (_RANK[option.mode], not option.borrows) > (_RANK[best.mode], not best.borrows):
            best = option
        if option.victims and q.model.when_can_preempt == "MayStopSearch" and borrowing_fit is None:
            return option  # whenCanPreempt: MayStopSearch preempts in the first flavor where that makes room
    return borrowing_fit or best  # preference BorrowingOverPreemption (the default)


def _may_preempt(view: CohortView, q: QueueView, pool: str, need: int) -> bool:
    """flavorassigner.fitsResourceQuota: within ``PotentialAvailable``, and the request within nominal quota or
    preemption while borrowing allowed (in a one-level cohort ``mayReclaimInHierarchy`` adds nothing)."""
    if need > view.potential(q, pool):
        return False
    model = q.model
    return (
        need <= model.quotas[pool].nominal
        or model.borrow_within_cohort != "Never"
        or (view.kueue.fair_sharing and model.reclaim != "Never")
    )


def targets(view: CohortView, inc: Incoming, pool: str, need: int) -> list[Admitted]:
    """Kueue's ``GetTargets`` for the workload on ``pool`` (the flavor in Preempt mode): the victims, or []."""
    if view.kueue.fair_sharing:
        return _fair(view, inc, pool, need)
    return _classical(view, inc, pool, need)


# -- shared ----------------------------------------------------------------------------------------------------------
def satisfies(policy: str, inc: Incoming, w: Admitted) -> bool:
    """common.SatisfiesPreemptionPolicy."""
    if policy == "LowerPriority":
        return w.priority < inc.priority
    if policy == "LowerOrNewerEqualPriority":
        return w.priority < inc.priority or (w.priority == inc.priority and inc.order_ts < w.order_ts)
    return policy == "Any"


def _eligible(ws: Iterable[Admitted], pool: str, policy: str, inc: Incoming) -> list[Admitted]:
    """The workloads of ``ws`` on ``pool`` that ``policy`` lets ``inc`` preempt: ``satisfies`` for a whole list, one
    comparison per workload (the fair-sharing search builds these lists for every head)."""
    if policy == "LowerPriority":
        p = inc.priority
        return [w for w in ws if w.flavor == pool and w.priority < p]
    if policy == "LowerOrNewerEqualPriority":
        p, ts = inc.priority, inc.order_ts
        return [w for w in ws if w.flavor == pool and (w.priority < p or (w.priority == p and ts < w.order_ts))]
    if policy == "Any":
        return [w for w in ws if w.flavor == pool]
    return []


def ordering(inc: Incoming) -> Callable[[Admitted], tuple]:
    """common.CandidatesOrdering: evicted first, other queues first, lower priority, most recently admitted, UID."""
    return lambda w: (not w.evicted, w.queue == inc.queue, w.priority, -w.admitted_at, w.n)


def _topology_ok(view: CohortView, pool: str, need: int, gone: list[Admitted]) -> bool:
    return view.topology is None or view.topology(pool, need, gone)


def _fits(view: CohortView, q: QueueView, pool: str, need: int, allow_borrowing: bool, gone: list[Admitted]) -> bool:
    """preemption.workloadFits on the snapshot with ``gone`` already removed from usage."""
    if not allow_borrowing and view.borrowing(q, pool, need):
        return False
    if need > view.available(q, pool):
        return False
    return _topology_ok(view, pool, need, gone)


def _remove(view: CohortView, w: Admitted) -> None:
    view.queues[w.queue].usage[w.flavor] -= w.slices


def _restore(view: CohortView, ws: list[Admitted]) -> None:
    for w in ws:
        view.queues[w.queue].usage[w.flavor] += w.slices


def _fill_back(
    view: CohortView, q: QueueView, pool: str, need: int, victims: list[Admitted], allow_borrowing: bool
) -> list[Admitted]:
    """Add back, newest removal first (the last one excepted), every victim the workload fits without."""
    victims = list(victims)
    for i in range(len(victims) - 2, -1, -1):
        w = victims[i]
        view.queues[w.queue].usage[w.flavor] += w.slices
        rest = victims[:i] + victims[i + 1 :]
        if _fits(view, q, pool, need, allow_borrowing, rest):
            victims[i] = victims[-1]  # Kueue's O(1) delete: the last victim takes the freed slot
            victims.pop()
        else:
            _remove(view, w)
    return victims


def _borrows_after(view: CohortView, q: QueueView, pool: str, need: int, victims: list[Admitted]) -> bool:
    own = sum(w.slices for w in victims if w.queue == q.model.name and w.flavor == pool)
    return view.in_cohort and q.usage[pool] - own + need > q.model.quotas[pool].nominal


# -- classical (no fair sharing) -------------------------------------------------------------------------------------
def _classical(view: CohortView, inc: Incoming, pool: str, need: int) -> list[Admitted]:
    q = view.queues[inc.queue]
    model = q.model
    same = (
        []
        if model.within_queue == "Never"
        else [(w, WITHIN) for w in q.admitted.values() if w.flavor == pool and satisfies(model.within_queue, inc, w)]
    )
    hier: list[tuple[Admitted, str]] = []
    prio: list[tuple[Admitted, str]] = []
    forbidden = model.borrow_within_cohort == "Never"
    if view.in_cohort and model.reclaim != "Never":
        advantage = q.usage[pool] + need <= model.quotas[pool].nominal  # QuantitiesFitInQuota(cq, requests)
        for other in view.queues.values():
            if other is q or pool not in other.model.quotas or not view.borrowing(other, pool):
                continue
            for w in other.admitted.values():
                if w.flavor != pool or not satisfies(model.reclaim, inc, w):
                    continue
                if advantage:
                    hier.append((w, HIER))
                elif (
                    forbidden
                    or w.priority >= inc.priority
                    or (model.borrow_threshold is not None and w.priority > model.borrow_threshold)
                ):
                    prio.append((w, WITHOUT_BORROWING))
                else:
                    prio.append((w, WHILE_BORROWING))
    key = ordering(inc)
    for group in (hier, prio, same):
        group.sort(key=lambda c: key(c[0]))
    cands = [c for g in (hier, prio, same) for c in g if c[0].evicted] + [
        c for g in (hier, prio, same) for c in g if not c[0].evicted
    ]
    under_nominal = q.usage[pool] < model.quotas[pool].nominal
    attempts: tuple[bool, ...]
    if not hier and not prio or (forbidden and not under_nominal):
        attempts = (True,)
    elif forbidden and not hier:
        attempts = (False, True)
    else:
        attempts = (True, False)
    for borrow in attempts:
        removed: list[Admitted] = []
        for w, variant in cands:
            if w.queue != q.model.name:
                if borrow and variant == WITHOUT_BORROWING:
                    continue
                owner = view.queues[w.queue]
                if not view.borrowing(owner, pool):
                    continue  # its queue is back within nominal: nothing left to reclaim there
            _remove(view, w)
            removed.append(w)
            if _fits(view, q, pool, need, borrow, removed):
                victims = _fill_back(view, q, pool, need, removed, borrow)
                _restore(view, victims)
                return victims
        _restore(view, removed)
    return []


# -- fair sharing ----------------------------------------------------------------------------------------------------
def _fair(view: CohortView, inc: Incoming, pool: str, need: int) -> list[Admitted]:
    q = view.queues[inc.queue]
    model = q.model
    cands = _eligible(q.admitted.values(), pool, model.within_queue, inc)
    if view.in_cohort and model.reclaim != "Never":
        for other in view.queues.values():
            if other is q or pool not in other.model.quotas or not view.borrowing(other, pool):
                continue
            cands += _eligible(other.admitted.values(), pool, model.reclaim, inc)
    if not cands or not _could_fit(view, q, pool, need, cands):
        return []
    cands.sort(key=ordering(inc))
    q.usage[pool] += need  # shares are computed with the incoming workload admitted
    removed: list[Admitted] = []
    try:
        fits, retry = _first_strategy(view, q, inc, pool, need, cands, removed, view.kueue.strategies[0])
        if not fits and len(view.kueue.strategies) > 1:
            fits = _second_strategy(view, q, inc, pool, need, retry, removed)
    finally:
        q.usage[pool] -= need
    if not fits:
        _restore(view, removed)
        return []
    victims = _fill_back(view, q, pool, need, removed, True)
    _restore(view, victims)
    return victims


def _could_fit(view: CohortView, q: QueueView, pool: str, need: int, cands: list[Admitted]) -> bool:
    """Does the request fit the quota with every candidate gone? If not, no victim set makes it fit (``available``
    only grows as usage falls), so the strategies need not run: a shortcut that decides nothing (most heads on a full
    cohort end here, bench/whatif_bench.py)."""
    for w in cands:
        view.queues[w.queue].usage[w.flavor] -= w.slices
    try:
        return need <= view.available(q, pool)
    finally:
        _restore(view, cands)


def _fits_fair(view: CohortView, q: QueueView, pool: str, need: int, removed: list[Admitted]) -> bool:
    q.usage[pool] -= need
    try:
        return _fits(view, q, pool, need, True, removed)
    finally:
        q.usage[pool] += need


class _Targets:
    """fairsharing.TargetClusterQueueOrdering for a one-level cohort: the queue with the largest share next."""

    def __init__(self, view: CohortView, q: QueueView, inc: Incoming, cands: list[Admitted]):
        self.view, self.q, self.key = view, q, ordering(inc)
        self.by_queue: dict[str, list[Admitted]] = {}
        for w in cands:
            self.by_queue.setdefault(w.queue, []).append(w)
        self.pruned: set[str] = set()

    def next(self) -> QueueView | None:
        if not self.view.in_cohort:
            return self.q if self.q.model.name not in self.pruned and self.by_queue.get(self.q.model.name) else None
        best: QueueView | None = None
        best_share = (-1.0, 0.0)
        for name, c in self.view.queues.items():
            if name in self.pruned:
                continue
            if not self.by_queue.get(name) or (
                c is not self.q and not any(self.view.borrowing(c, f) for f in c.nominal)
            ):
                self.pruned.add(name)
                continue
            share = self.view.share(c)
            if best is None or share > best_share:
                best, best_share = c, share
            elif share == best_share and self.key(self.by_queue[name][0]) < self.key(self.by_queue[best.model.name][0]):
                best = c
        return best

    def pop(self, c: QueueView) -> Admitted:
        return self.by_queue[c.model.name].pop(0)

    def has(self, c: QueueView) -> bool:
        return bool(self.by_queue.get(c.model.name))


def _share_after(view: CohortView, c: QueueView, w: Admitted) -> tuple[float, float]:
    c.usage[w.flavor] -= w.slices
    try:
        return view.share(c)
    finally:
        c.usage[w.flavor] += w.slices


def _passes(strategy: str, preemptor_new: tuple, target_old: tuple, target_new: tuple) -> bool:
    if strategy == "LessThanInitialShare":
        return preemptor_new < target_old
    return preemptor_new <= target_new  # LessThanOrEqualToFinalShare


def _first_strategy(
    view: CohortView,
    q: QueueView,
    inc: Incoming,
    pool: str,
    need: int,
    cands: list[Admitted],
    removed: list[Admitted],
    strategy: str,
) -> tuple[bool, list[Admitted]]:
    order = _Targets(view, q, inc, cands)
    retry: list[Admitted] = []
    within_nominal = not view.borrowing(q, pool)  # FairSharingPreemptWithinNominal (on in v0.19): usage incl. incoming
    while (c := order.next()) is not None:
        if c is q or within_nominal:
            w = order.pop(c)
            _remove(view, w)
            removed.append(w)
            if _fits_fair(view, q, pool, need, removed):
                return True, []
            continue
        mine, theirs = view.share(q), view.share(c)
        if mine[0] == math.inf and theirs[0] != math.inf:
            while order.has(c):
                retry.append(order.pop(c))
            continue
        while order.has(c):
            w = order.pop(c)
            if _passes(strategy, mine, theirs, _share_after(view, c, w)):
                _remove(view, w)
                removed.append(w)
                if _fits_fair(view, q, pool, need, removed):
                    return True, []
                break  # shares changed: pick the queue again
            retry.append(w)
    return False, retry


def _second_strategy(
    view: CohortView, q: QueueView, inc: Incoming, pool: str, need: int, retry: list[Admitted], removed: list[Admitted]
) -> bool:
    """Rule S2-b: one workload per queue whose share is still above the preemptor's (LessThanInitialShare)."""
    order = _Targets(view, q, inc, retry)
    while (c := order.next()) is not None:
        passed = view.share(q) < view.share(c)
        w = order.pop(c)
        if passed:
            _remove(view, w)
            removed.append(w)
            if _fits_fair(view, q, pool, need, removed):
                return True
        order.pruned.add(c.model.name)
    return False
