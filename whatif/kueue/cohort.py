"""A snapshot of Kueue's quota state, as its scheduler and preemptor see it: the ClusterQueues of one cohort with their
quotas, usage and admitted workloads. Plain data and quota arithmetic, no engine: the simulator keeps one up to date
(``kueue_sched.py``) and the ported Kueue test tables build one from YAML (``tests/whatif/kueue_tables``), so the
preemption (``kueue_preempt.py``) is tested on exactly what it decides on. Quantities are slices (= GPUs on pools that
do not share) per flavor (= pool); one resource per flavor, as the rendered ClusterQueues have."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from whatif.cluster import KueueModel, QueueModel


@dataclass(eq=False)
class Admitted:
    """A workload holding quota (admitted, pods running or not)."""

    key: Any
    """The owner's handle: the simulator's job state, or a test case's workload name."""
    queue: str
    flavor: str
    slices: int
    priority: int
    order_ts: float
    """Its queue-order timestamp (``LowerOrNewerEqualPriority`` compares it)."""
    admitted_at: float
    """When quota was reserved: among equal priorities the most recently admitted is preempted first."""
    n: int = 0
    """Tie-break (Kueue: the workload UID)."""
    evicted: bool = False
    """Already being evicted: Kueue takes such workloads first."""


@dataclass(slots=True)
class Incoming:
    """The head workload looking for quota (one per head and cycle: a plain slotted class, cheap to make; nothing
    changes it)."""

    queue: str
    priority: int
    order_ts: float
    need: dict[str, int]
    """Flavor -> slices it takes there, in the order flavors are tried (its candidate pools)."""


class QueueView:
    def __init__(self, model: QueueModel):
        self.model = model
        self.usage: dict[str, int] = {p: 0 for p in model.quotas}
        self.admitted: dict[Any, Admitted] = {}
        """key -> admitted workload, in admission order."""
        self.nominal: dict[str, int] = {p: q.nominal for p, q in model.quotas.items()}
        self.guarantee: dict[str, int] = {
            p: 0 if q.lending_limit is None else max(0, q.nominal - q.lending_limit) for p, q in model.quotas.items()
        }
        """Per flavor: nominal minus the lending limit (0 without one), what the queue keeps for itself."""

    def add(self, w: Admitted) -> None:
        self.admitted[w.key] = w
        self.usage[w.flavor] += w.slices

    def remove(self, w: Admitted) -> None:
        del self.admitted[w.key]
        self.usage[w.flavor] -= w.slices


TopologyFit = Callable[[str, int, Sequence[Admitted]], bool]
"""(flavor, slices needed, workloads assumed gone) -> do the nodes hold the incoming workload (TAS)?"""


@dataclass
class CohortView:
    kueue: KueueModel
    queues: dict[str, QueueView]
    topology: TopologyFit | None = None
    """Flavors placed by topology (TAS) answer here whether the nodes hold the workload; None: quota only."""
    cohort_quota: dict[str, int] = field(default_factory=dict)
    """Quota the Cohort object itself provides per flavor (none in rendered stacks; some of Kueue's tables)."""
    lendable: dict[str, int] = field(default_factory=dict)
    in_cohort: bool = field(init=False, default=False)
    _members: dict[str, list[QueueView]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        flavors = {p for q in self.queues.values() for p in q.model.quotas}
        self.lendable = {
            p: sum(_lend(q.model, p) for q in self.queues.values() if p in q.model.quotas) + self.cohort_quota.get(p, 0)
            for p in flavors
        }
        self.in_cohort = self.kueue.cohort is not None
        self._members = {p: [c for c in self.queues.values() if p in c.nominal] for p in flavors}
        """Per flavor, the queues that quota it (the view's queues are fixed)."""

    # -- Kueue's quota arithmetic for a ClusterQueue in a one-level cohort (pkg/cache/scheduler resource nodes) --
    def guaranteed(self, q: QueueView, flavor: str) -> int:
        """What ``q`` keeps for itself: nominal minus its lending limit (0 without one)."""
        return q.guarantee[flavor]

    def cohort_free(self, flavor: str) -> int:
        """The cohort's subtree quota (what its queues lend, plus its own) minus what they use of it."""
        total, used = self.cohort_quota.get(flavor, 0), 0
        for c in self._members.get(flavor, ()):
            g = c.guarantee[flavor]
            total += c.nominal[flavor] - g
            over = c.usage[flavor] - g
            if over > 0:
                used += over
        return total - used

    def available(self, q: QueueView, flavor: str) -> int:
        """Kueue's ``Available``: the queue's unused guarantee plus what the cohort can still give it (capped by its
        borrowing limit); without a cohort, nominal minus usage."""
        quota = q.model.quotas[flavor]
        usage = q.usage[flavor]
        if not self.in_cohort:
            return quota.nominal - usage
        g = q.guarantee[flavor]
        parent = self.cohort_free(flavor)
        if quota.borrowing_limit is not None:
            parent = min(quota.nominal - g - max(0, usage - g) + quota.borrowing_limit, parent)
        return max(0, g - usage) + parent

    def potential(self, q: QueueView, flavor: str) -> int:
        """Kueue's ``PotentialAvailable``: what the queue could get with nothing admitted anywhere: its nominal quota
        plus what the rest of the cohort lends, capped by its borrowing limit; without a cohort, nominal."""
        quota = q.model.quotas[flavor]
        if not self.in_cohort:
            return quota.nominal
        g = self.guaranteed(q, flavor)
        total = self.lendable.get(flavor, 0)
        if quota.borrowing_limit is not None:
            total = min(quota.nominal - g + quota.borrowing_limit, total)
        return g + total

    def borrowing(self, q: QueueView, flavor: str, extra: int = 0) -> bool:
        return self.in_cohort and q.usage[flavor] + extra > q.nominal[flavor]

    def fits_quota(self, q: QueueView, flavor: str, need: int) -> tuple[bool, bool]:
        """(fits, borrows): the request fits what is available to the queue; it borrows when it goes above nominal."""
        if need > self.available(q, flavor):
            return False, False
        return True, self.borrowing(q, flavor, need)

    def share(self, q: QueueView, flavor: str | None = None, extra: int = 0) -> tuple[float, float]:
        """Dominant resource share (Kueue's DRS) as a sort key: per flavor, usage above nominal over what the cohort
        lends, × 1000, the largest, divided by the fair-sharing weight. A borrowing queue of weight 0 has an infinite
        share; two of them compare by the unweighted share (Kueue's CompareDRS)."""
        best = 0.0
        borrowing = False
        if self.in_cohort:
            usage, lendable = q.usage, self.lendable
            for name, nominal in q.nominal.items():
                over = usage[name] + (extra if name == flavor else 0) - nominal
                if over > 0:
                    borrowing = True
                    lend = lendable.get(name, 0)
                    if lend:
                        best = max(best, over * 1000 / lend)
        weight = q.model.weight
        if weight == 0:
            return (math.inf, best) if borrowing else (0.0, 0.0)
        return best / weight, 0.0


def _lend(q: QueueModel, flavor: str) -> int:
    quota = q.quotas[flavor]
    return quota.nominal if quota.lending_limit is None else min(quota.lending_limit, quota.nominal)
