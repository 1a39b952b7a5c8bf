"""A snapshot of Kueue's quota state, as its scheduler and preemptor see it: the ClusterQueues of one cohort with their
quotas, usage and admitted workloads. Plain data and quota arithmetic, no engine: the simulator keeps one up to date
(``kueue_sched.py``) and the ported Kueue test tables build one from YAML (``tests/whatif/kueue_tables``), so the
preemption (``kueue_preempt.py``) is tested on exactly what it decides on. Quantities are slices (= GPUs on pools that
do not share) per flavor (= pool); one resource per flavor, as the rendered ClusterQueues have."""
from __future__ import annotations

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


@dataclass(frozen=True)
class Incoming:
    """The head workload looking for quota."""
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
    lendable: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        flavors = {p for q in self.queues.values() for p in q.model.quotas}
        self.lendable = {p: sum(_lend(q.model, p) for q in self.queues.values() if p in q.model.quotas)
                         for p in flavors}

    @property
    def in_cohort(self) -> bool:
        return self.kueue.cohort is not None

    def cohort_room(self, q: QueueView, flavor: str, extra: int) -> bool:
        """Can ``q`` take ``extra`` more slices of ``flavor`` beyond its guarantee from what the cohort lends?"""
        if not self.in_cohort:
            return False
        lendable = used = 0
        for c in self.queues.values():
            quota = c.model.quotas.get(flavor)
            if quota is None:
                continue
            lend = _lend(c.model, flavor)
            lendable += lend
            usage = c.usage[flavor] + (extra if c is q else 0)
            used += max(0, usage - (quota.nominal - lend))
        return used <= lendable

    def share(self, q: QueueView, flavor: str | None = None, extra: int = 0) -> float:
        """Dominant resource share: slices borrowed above nominal over what the cohort lends, times 1000 / weight."""
        best = 0.0
        for name, quota in q.model.quotas.items():
            usage = q.usage[name] + (extra if name == flavor else 0)
            lendable = self.lendable.get(name, 0)
            if lendable:
                best = max(best, max(0, usage - quota.nominal) / lendable)
        return best * 1000 / q.model.weight

    def fits_quota(self, q: QueueView, flavor: str, need: int) -> tuple[bool, bool]:
        """(fits, borrows): within nominal and not lent out, or borrowing within its limit from the cohort."""
        quota = q.model.quotas[flavor]
        usage = q.usage[flavor]
        if usage + need <= quota.nominal and (not self.in_cohort or self.cohort_room(q, flavor, need)):
            return True, False
        over = usage + need - quota.nominal
        if (quota.borrowing_limit is None or over <= quota.borrowing_limit) and self.cohort_room(q, flavor, need):
            return True, True
        return False, False


def _lend(q: QueueModel, flavor: str) -> int:
    quota = q.quotas[flavor]
    return quota.nominal if quota.lending_limit is None else min(quota.lending_limit, quota.nominal)
