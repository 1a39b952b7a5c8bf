"""Preemption loops: workloads of two or more ClusterQueues evicting each other over and over. Kueue v0.19.2 has no
guard against them (each decision is legal on its own), so the simulator reports one as a configuration defect,
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
        worst = max(looping, key=lambda v: (self.evictions[v], v))
        out = []
        for pool in sorted(by_pool):
            queues = ", ".join(sorted(by_pool[pool]))
            out.append(
                f"configuration defect: a preemption loop on pool {pool} between queues {queues}: {count[pool]:,} "
                f"evictions of {sum(1 for v in looping if any(k[1] == v and k[2] == pool for k in self.pairs))} "
                f"workloads evicted {LOOP_EVICTIONS}+ times each ({worst}: {self.evictions[worst]:,}). Kueue "
                f"v0.19.2 loops the same way on this configuration (each eviction is legal on its own; see "
                f"docs/whatif.md, 'Preemption loops'). Fix: give each queue nominal quota for its largest gang on "
                f"{pool}, or narrow scheduling.preemption.reclaimWithinCohort (Any lets any priority reclaim).")
        return out
