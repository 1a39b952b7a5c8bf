"""The manager's ClusterQueue as Kueue v0.19.2 orders and preempts in it, for ``sched.py``.

Queue order (``pkg/queue``, ``Ordering.GetQueueOrderTimestamp`` in ``pkg/workload``): higher priority first, then
the older queue-order timestamp. That timestamp is the creation time, except for a Workload evicted by an admission
check, which is ordered by its eviction time. MultiKueue (``MultiKueueRedoAdmissionOnEvictionInWorker``, GA and locked
on since 0.18) sets the manager's check to ``Retry`` when the copy is evicted on its worker, so a job evicted there
queues again behind every job of its priority already waiting. A Workload the manager preempts is evicted by
preemption, not by a check: it keeps its creation time.

Preemption (``preemption.go``, ``common/ordering.go``): the manager's ClusterQueues render
``withinClusterQueue: LowerPriority``, so a job that does not fit may evict admitted jobs of its queue with a lower
priority: candidates lowest priority first, then the most recently admitted first; taken until the job fits, then
``fillBackWorkloads`` gives back, in reverse order, every victim that is not needed."""
from __future__ import annotations

from typing import Protocol, Sequence, TypeVar


class Held(Protocol):
    value: int
    """Priority."""
    reserved_at: float
    """When it got the manager's quota."""
    n: int

    @property
    def gpus(self) -> float: ...


H = TypeVar("H", bound=Held)


def manager_order(value: int, order_ts: float, n: int) -> tuple[int, float, int]:
    """The key of Kueue's queue order in one ClusterQueue: higher priority, older queue-order timestamp."""
    return (-value, order_ts, n)


def victims(priority: int, need: float, free: float, admitted: Sequence[H]) -> list[H] | None:
    """The admitted workloads Kueue would preempt so that ``need`` GPUs fit in ``free``, or None when evicting every
    lower-priority one would not make room (nothing is preempted then)."""
    if need <= free:
        return []
    candidates = sorted((w for w in admitted if w.value < priority), key=lambda w: (w.value, -w.reserved_at, w.n))
    chosen: list[H] = []
    for w in candidates:
        chosen.append(w)
        free += w.gpus
        if need <= free:
            break
    else:
        return None
    for i in range(len(chosen) - 2, -1, -1):  # fillBackWorkloads: the last one taken is needed by construction
        if need <= free - chosen[i].gpus:
            free -= chosen[i].gpus
            del chosen[i]
    return chosen
