"""The fleet's jobs: a job as the MultiKueue manager holds it, its copies on the workers, and the engine as one
worker's Kueue sees it (its own cluster model and pools, the rest passed through to the engine)."""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from whatif.cluster import ClusterModel
from whatif.core import RUNNING, Host, JobState
from whatif.fleet.manager import manager_order
from whatif.kueue.cohort import Admitted
from whatif.kueue.sched import KueueJob
from whatif.model import Job
from whatif.nodes import Node, PoolState


class FleetHooks(Protocol):
    """What a worker's host tells the fleet scheduler (``sched.FleetScheduler``), named here so this module does
    not import the scheduler (no import circle)."""

    def running(self, js: JobState) -> None: ...

    def evicted_unstarted(self, js: Copy, now: float) -> None: ...


class FleetJob(JobState):
    """A job as the manager sees it; ``copies`` are its offers, one per nominated worker."""

    __slots__ = (
        "copies",
        "nominated",
        "reserved",
        "winner",
        "value",
        "order_ts",
        "reserved_at",
        "flavor",
        "held",
        "ghost",
    )

    def __init__(self, job: Job, n: int):
        super().__init__(job, n)
        self.copies: dict[str, "Copy"] = {}
        self.nominated = 0
        self.reserved = False
        """Holds manager quota (from dispatch to the end of the job)."""
        self.reserved_at = -1.0
        self.winner: str | None = None
        self.value = 0
        """Priority (its WorkloadPriorityClass's value; 0 without one)."""
        self.order_ts = job.submit_s
        """Queue-order timestamp at the manager: creation, or the last eviction by MultiKueue's check."""
        self.flavor: str | None = None
        """The manager flavor (GPU model) its fleet runtime selects; it holds that flavor's quota."""
        self.held: Admitted | None = None
        self.ghost: "Copy | None" = None
        """Its copy left on a lost worker after the manager evicted it (running or finished), until reconnection."""

    @property
    def gpus(self) -> float:
        return self.job.gpus

    def key(self) -> tuple[int, float, int]:
        return manager_order(self.value, self.order_ts, self.n)


class Copy(KueueJob):
    __slots__ = ("worker", "parent")

    def __init__(self, job: Job, n: int, worker: str, parent: FleetJob):
        super().__init__(job, n)
        self.worker, self.parent = worker, parent


class WorkerHost:
    """The engine as one worker's Kueue sees it: that worker's cluster model and pools; the rest goes through."""

    def __init__(self, eng: Host, cluster: ClusterModel, fleet: FleetHooks):
        self.eng, self.cluster, self.fleet = eng, cluster, fleet
        self.options = eng.options
        self.pools = {n: eng.pools[n] for n in cluster.pools}

    @property
    def dirty(self) -> bool:
        return self.eng.dirty

    @dirty.setter
    def dirty(self, value: bool) -> None:
        self.eng.dirty = value

    @property
    def up_gpus(self) -> float:
        return self.eng.up_gpus

    @property
    def reclaiming(self) -> bool:
        return self.eng.reclaiming

    def push(self, t: float, kind: int, payload: Any = None) -> None:
        self.eng.push(t, kind, payload)

    def start(self, js: JobState, pool: PoolState, chosen: Sequence[Node], backfilled: bool = False) -> None:
        if isinstance(js, Copy) and js.parent.winner not in (None, js.worker):
            return  # another worker won this instant: the manager deletes this copy before its pods matter
        self.fleet.running(js)
        self.eng.start(js, pool, chosen, backfilled)

    def preempt(self, js: JobState, requeue: bool, counted: bool = True) -> None:
        if (
            isinstance(js, Copy) and js.state != RUNNING
        ):  # a victim admitted whose pods never ran: evicted, no work lost
            self.fleet.evicted_unstarted(js, self.eng.now)  # type: ignore[attr-defined]
            return
        self.eng.preempt(js, requeue, counted)

    def gpus_held(self, js: JobState) -> float:
        return self.eng.gpus_held(js)

    def node_on(self, pool: PoolState, node: Node, ready: bool) -> None:
        self.eng.node_on(pool, node, ready)

    def node_off(self, pool: PoolState, node: Node) -> None:
        self.eng.node_off(pool, node)
