"""One Kueue scheduling cycle on a cohort snapshot (``kueue_cohort.py``), as Kueue v0.19.2's scheduler runs it
(pkg/scheduler/scheduler.go: ``schedule``, ``processEntry``; ``fair_sharing_iterator.go``):

1. every ClusterQueue's head gets its flavor assignment and preemption targets against the snapshot as the cycle
   starts (``kueue_preempt.choose``: an entry);
2. entries are taken in Kueue's order: without fair sharing, those that do not borrow first, then higher priority,
   then the older queue-order timestamp; with fair sharing, the entry whose queue has the lowest dominant resource
   share with the workload added (non-borrowing first), recomputed after every entry;
3. each entry, on the snapshot as the cycle has changed it so far: NoFit is left (inadmissible); a preemption with
   no candidates reserves its quota when its queue cannot always reclaim (``reclaimWithinCohort`` other than
   ``Any``), so that borrowers in the cohort cannot take it this cycle; an entry whose victims overlap an earlier
   entry's, or that no longer fits once earlier entries took their quota (their victims gone), is skipped and stays
   at its queue's head; otherwise it takes its quota: admitted (``fit``) or preempting its victims.

Pure: the owner applies each decision through ``Apply`` (the simulator admits and evicts; the ported Kueue tables,
``tests/whatif/kueue_tables/schedule.yaml``, record them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from whatif.kueue.cohort import Admitted, CohortView, Incoming
from whatif.kueue.preempt import Choice

FIT, PREEMPTING, SKIPPED, NO_FIT = "admitted", "preempting", "skipped", "inadmissible"


@dataclass
class Entry:
    key: Any
    """The owner's handle for the head workload."""
    inc: Incoming
    choice: Choice | None
    n: int = 0
    """Tie-break after the queue-order timestamp (Kueue: the order the heads came in)."""
    outcome: str = ""


class Apply(Protocol):
    def focus(self, entry: Entry) -> None:
        """The cycle is about to decide on ``entry`` (topology checks are for its workload)."""

    def admit(self, entry: Entry) -> None:
        """Reserve the entry's quota on ``entry.choice.pool`` in the view (and whatever the owner does)."""

    def preempt(self, entry: Entry) -> None:
        """Evict ``entry.choice.victims`` (their quota leaves the view) and reserve the entry's quota."""


@dataclass
class Cycle:
    view: CohortView
    apply: Apply
    reserved: list[tuple[str, str, int]] = field(default_factory=list)
    """(queue, flavor, slices) held for unreclaimable preemptions until the cycle ends."""
    preempted: set[int] = field(default_factory=set)
    """id() of the workloads preempted so far this cycle."""

    def run(self, entries: list[Entry]) -> list[Entry]:
        """Process ``entries`` (one per queue) in Kueue's order; each gets its ``outcome``. Returns them in the
        order they were processed."""
        done: list[Entry] = []
        try:
            if self.view.kueue.fair_sharing and self.view.in_cohort:
                pending = list(entries)
                while pending:
                    e = min(pending, key=self._fair_key) if len(pending) > 1 else pending[0]
                    pending.remove(e)
                    self._process(e)
                    done.append(e)
            else:
                for e in sorted(entries, key=_classical_key):
                    self._process(e)
                    done.append(e)
        finally:
            for queue, flavor, slices in self.reserved:
                self.view.queues[queue].usage[flavor] -= slices
        return done

    def _fair_key(self, e: Entry) -> tuple:
        """entryComparer.less: non-borrowing first, the lowest share with the workload added, priority, time."""
        if e.choice is None:
            return (True, (0.0, 0.0), -e.inc.priority, e.inc.order_ts, e.n)
        q = self.view.queues[e.inc.queue]
        need = e.inc.need[e.choice.pool]
        borrows = self.view.borrowing(q, e.choice.pool, need)
        return (borrows, self.view.share(q, e.choice.pool, need), -e.inc.priority, e.inc.order_ts, e.n)

    def _process(self, e: Entry) -> None:
        self.apply.focus(e)
        c = e.choice
        if c is None:
            e.outcome = NO_FIT
            return
        q = self.view.queues[e.inc.queue]
        need = e.inc.need[c.pool]
        if c.mode == "no-candidates":
            e.outcome = NO_FIT
            if q.model.reclaim != "Any":  # CanAlwaysReclaim: only Any is sure to get its quota back
                self._reserve(e.inc.queue, c.pool, need, c.borrows)
            return
        if any(id(w) in self.preempted for w in c.victims):
            e.outcome = SKIPPED
            return
        if not self._still_fits(e.inc.queue, c.pool, need, c.victims):
            e.outcome = SKIPPED
            return
        if c.victims:
            self.preempted.update(id(w) for w in c.victims)
            self.apply.preempt(e)
            e.outcome = PREEMPTING
        else:
            self.apply.admit(e)
            e.outcome = FIT

    def _still_fits(self, queue: str, pool: str, need: int, victims: list[Admitted]) -> bool:
        """scheduler.fits: the queue's Fits on the snapshot as changed so far, this entry's victims removed."""
        view = self.view
        for w in victims:
            view.queues[w.queue].usage[w.flavor] -= w.slices
        try:
            ok = need <= view.available(view.queues[queue], pool)
            return ok and (view.topology is None or view.topology(pool, need, victims))
        finally:
            for w in victims:
                view.queues[w.queue].usage[w.flavor] += w.slices

    def _reserve(self, queue: str, pool: str, need: int, borrows: bool) -> None:
        """quotaResourcesToReserve for a preemption without candidates: up to nominal, or up to nominal plus the
        borrowing limit when the assignment borrows."""
        q = self.view.queues[queue]
        quota, usage = q.model.quotas[pool], q.usage[pool]
        if borrows:
            slices = need if quota.borrowing_limit is None else min(need, quota.nominal + quota.borrowing_limit - usage)
        else:
            slices = max(0, min(need, quota.nominal - usage))
        if slices > 0:
            q.usage[pool] += slices
            self.reserved.append((queue, pool, slices))


def _classical_key(e: Entry) -> tuple:
    """classicalIterator: not borrowing first, higher priority, older queue-order timestamp (stable otherwise)."""
    borrows = e.choice is not None and e.choice.borrows
    return (borrows, -e.inc.priority, e.inc.order_ts, e.n)
