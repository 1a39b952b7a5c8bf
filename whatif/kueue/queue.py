"""A Kueue ClusterQueue's pending workloads as the simulator keeps them (``kueue_sched.py``): each workload's
queue-order fields, the queue kept in Kueue's order, the workloads parked as inadmissible, and where the next head
search starts."""

from __future__ import annotations

from whatif.cluster import QueueModel
from whatif.core import JobState
from whatif.kueue.cohort import Admitted, QueueView
from whatif.model import Job

NEVER = float("-inf")  # a stamp no simulated time equals: the cached head search is stale


class KueueJob(JobState):
    __slots__ = ("value", "order_ts", "admitted_at", "requeues", "held", "shape", "needs", "ready_by")

    def __init__(self, job: Job, n: int):
        super().__init__(job, n)
        self.value = 0
        """Priority (the priority class's value; 0 without one)."""
        self.order_ts = job.submit_s
        """Queue-order timestamp."""
        self.admitted_at = -1.0
        self.requeues = 0
        self.ready_by = float("inf")
        """waitForPodsReady: its pods must all run by then (admission or a reclaim + the timeout)."""
        self.held: Admitted | None = None
        """Its quota reservation in the cohort view while admitted."""
        self.shape: tuple = ()
        """(queue, nodes, GPUs per node, share, pool, priority): twins decide alike (set at submit)."""
        self.needs: dict[str, int] | None = None
        """Candidate pool -> slices, for the pools whose nodes can hold it (fixed: computed once)."""


class CQ(QueueView):
    def __init__(self, model: QueueModel):
        super().__init__(model)
        self.pending: list[KueueJob] = []
        self.parked: set[int] = set()
        """BestEffortFIFO: workloads that did not fit, left aside until something is released."""
        self.preempting: set[int] = set()
        """Parked preemptors waiting for their victims' pods: each still heads the queue (Kueue requeues it at once,
        RequeueReasonPendingPreemption), so nothing behind it is a head until quota is released."""
        self.cursor = 0
        """Pending before this index are all parked (or in backoff): the next head is searched from here."""
        self.head_at = NEVER
        self.head_js: KueueJob | None = None
        """The head the last search found at ``head_at`` (None: no head then), valid until the queue or its parked
        set changes (``head_at`` reset)."""
        self.scan_at, self.scan_i = NEVER, 0
        """At ``scan_at`` every pending workload before ``scan_i`` is in backoff or parked, so the next search
        starts there; valid until the pending list changes or the parked set is cleared."""

    def unpark(self) -> None:
        self.parked.clear()
        self.preempting.clear()
        self.cursor = 0
        self.head_at = self.scan_at = NEVER


def queue_order(js: KueueJob) -> tuple:
    """Kueue's queue order within a ClusterQueue: higher priority, then the older queue-order timestamp."""
    return (-js.value, js.order_ts, js.n)
