"""Preemption loops: workloads evicted over and over (between ClusterQueues of a cohort, or within one). Kueue v0.19.2
has no guard against them (each decision is legal on its own), so the simulator reports one as a configuration defect,
naming the queues and the pool, instead of printing a large preemption count without comment (docs/whatif.md,
"Preemption loops")."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

LOOP_EVICTIONS = 10
"""A workload preempted this many times is in a loop: a real job restarted ten times by the scheduler alone."""


@dataclass
class PreemptionLog:
    evictions: Counter = field(default_factory=Counter)
    """workload id -> times it was preempted (spot interruptions and pods-ready timeouts not counted)."""
    victim_queue: dict[str, str] = field(default_factory=dict)
    pairs: Counter = field(default_factory=Counter)
    """(preemptor's queue, victim id, pool) -> evictions."""

    def record(self, preemptor_queue: str, victim_id: str, victim_queue: str, pool: str) -> None:
        self.evictions[victim_id] += 1
        self.victim_queue[victim_id] = victim_queue
        self.pairs[(preemptor_queue, victim_id, pool)] += 1

    def warnings(self) -> list[str]:
        looping = {v for v, n in self.evictions.items() if n >= LOOP_EVICTIONS}
        if not looping:
            return []
        by_pool: dict[str, set[str]] = {}
        count: Counter = Counter()
        for (pq, victim, pool), n in self.pairs.items():
            if victim in looping:
                by_pool.setdefault(pool, set()).update((pq, self.victim_queue[victim]))
                count[pool] += n
        out = []
        for pool in sorted(by_pool):
            here = {k[1] for k in self.pairs if k[2] == pool and k[1] in looping}
            worst = max(here, key=lambda v: (self.evictions[v], v))
            queues = sorted(by_pool[pool])
            where = f"within queue {queues[0]}" if len(queues) == 1 else f"between queues {', '.join(queues)}"
            out.append(
                f"configuration defect: a preemption loop on pool {pool} {where}: {count[pool]:,} evictions, "
                f"{len(here)} workloads evicted {LOOP_EVICTIONS}+ times ({worst}: {self.evictions[worst]:,}). The "
                f"simulator, applying Kueue v0.19.2's preemption rules, made each of these evictions as a legal decision "
                f"on its own; the loop is this configuration's under those rules (not checked against a running "
                f"Kueue). {_remedies(len(queues) == 1)} docs/whatif.md, 'Preemption loops', works through one."
            )
        return out


def _remedies(one_queue: bool) -> str:
    """What removed or shrank the loops docs/whatif.md measured (gke-kueue, seeds 0 / 1 / 7), not untested advice."""
    if one_queue:
        return (
            "The queue's own higher-priority jobs evict its lower ones (scheduling.preemption.withinQueue), each "
            "restart losing the work since its last checkpoint: checkpoints (the workload's checkpointMinutes or "
            "checkpointS) bound what each eviction costs."
        )
    return (
        "Measured remedies: reclaimWithinCohort: Never, or no lending of this pool's quota (lendingLimit: 0 on "
        "every queue's quota here), removed the loop between queues; reclaimWithinCohort: LowerPriority shrank "
        "it to tens of evictions; lendingLimit: 0 on one queue only, or a nominal quota covering the largest "
        "gang, left or moved it."
    )
