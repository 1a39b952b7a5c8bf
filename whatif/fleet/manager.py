"""The manager's ClusterQueue as Kueue v0.19.2 orders and preempts in it, for ``sched.py``.

Queue order (``pkg/queue``, ``Ordering.GetQueueOrderTimestamp`` in ``pkg/workload``): higher priority first, then
the older queue-order timestamp. That timestamp is the creation time, except for a Workload evicted by an admission
check, which is ordered by its eviction time. MultiKueue (``MultiKueueRedoAdmissionOnEvictionInWorker``, GA and locked
on since 0.18) sets the manager's check to ``Retry`` when the copy is evicted on its worker, so a job evicted there
queues again behind every job of its priority already waiting. A Workload the manager preempts is evicted by
preemption, not by a check: it keeps its creation time.

Quota and preemption: the manager's ClusterQueues as rendered (a flavor per GPU model, cohort ``fleet`` with the
workers' borrowing and lending limits, ``withinClusterQueue: LowerPriority``, ``reclaimWithinCohort: Any``) go through
the same ported flavor assigner and preemptor as a worker's queues (``whatif/kueue/cohort.py``, ``preempt.py``):
candidates from borrowing siblings first, then lower priority, then the most recently admitted; ``fillBackWorkloads``
gives back every victim that is not needed."""

from __future__ import annotations


def manager_order(value: int, order_ts: float, n: int) -> tuple[int, float, int]:
    """The key of Kueue's queue order in one ClusterQueue: higher priority, older queue-order timestamp."""
    return (-value, order_ts, n)
