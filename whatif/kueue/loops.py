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
        out = []
        for pool in sorted(by_pool):
            here = {k[1] for k in self.pairs if k[2] == pool and k[1] in looping}
            worst = max(here, key=lambda v: (self.evictions[v], v))
            out.append(
                f"configuration defect: a preemption loop on pool {pool} between queues "
                f"{', '.join(sorted(by_pool[pool]))}: {count[pool]:,} evictions, {len(here)} workloads evicted "
                f"{LOOP_EVICTIONS}+ times ({worst}: {self.evictions[worst]:,}). Kueue v0.19.2 loops the same way on "
                f"this configuration: each eviction is legal on its own, and the quota one frees goes to whichever "
                f"head wins the next cycle. Fix: look for a gang larger than its queue's nominal quota on {pool} (it "
                f"only runs borrowing and blocks its queue) and for quota lent to another queue and reclaimed at once "
                f"(lendingLimit); docs/whatif.md, 'Preemption loops', works through one.")
        return out
