"""A record of each Kueue admission in the simulator, as Kueue's quota saw it, for the tests that hold the what-if to
Kueue's rules (``tests/preview/test_generated_cohorts.py``: cohort usage within what the cohort can give, honouring
lending and borrowing limits, and the flavor chosen as the ported flavor assigner chooses it). Recorded only when a
caller sets ``KueueScheduler.audit`` to a list: a normal run pays nothing for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from whatif.kueue.cohort import QueueView

Held = dict[str, dict[str, int]]
"""Queue -> flavor (pool) -> slices held by its admitted workloads."""


@dataclass(frozen=True)
class AdmissionAudit:
    t: float
    job: str
    queue: str
    pool: str
    """The flavor it was admitted on."""
    slices: int
    before: Held
    """As the cycle that admitted it began, every admitted workload counted (those being evicted hold their quota
    until their pods are gone): the state its flavor was chosen against."""
    after: Held
    """Just after the admission, workloads being evicted left out (their quota is already promised to preemptors)."""


def held(queues: Mapping[str, QueueView] | Iterable[QueueView], evicting: bool = True) -> Held:
    """Slices held per queue and flavor, summed from the admitted workloads themselves (not the usage counters)."""
    views = queues.values() if isinstance(queues, Mapping) else queues
    out: Held = {}
    for q in views:
        per = out.setdefault(q.model.name, {p: 0 for p in q.model.quotas})
        for w in q.admitted.values():
            if evicting or not w.evicted:
                per[w.flavor] += w.slices
    return out
