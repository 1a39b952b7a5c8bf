"""What the engine and the schedulers share, and nothing more: the event kinds, a job's life states, the part of a
job's state every scheduler uses, the ``Scheduler`` protocol the engine drives (including what the autoscaler asks
of it) and the narrow ``Host`` protocol a scheduler may use. The engine (``engine.py``) implements ``Host``; the
schedulers (``kueue_sched.py``, ``slurm_sched.py``) implement ``Scheduler`` and add their own per-job fields in a
``JobState`` subclass. Nobody here imports a scheduler or the engine, so there is no import circle."""

from __future__ import annotations

from typing import Any, Callable, Generic, Protocol, Sequence, TypeVar

from whatif.cluster import ClusterModel
from whatif.model import Job, SimOptions
from whatif.nodes import Node, PoolState

SUBMIT, END, NODE_READY, IDLE_CHECK, INTERRUPT, TICK, BLOCK_END = range(7)
PENDING, ADMITTED, RUNNING, DONE, NEVER = range(5)


class JobState:
    """A job during one run, as the engine sees it (scheduler-specific fields live in subclasses)."""

    __slots__ = (
        "job",
        "n",
        "state",
        "pool",
        "alloc",
        "start",
        "token",
        "starts",
        "preempts",
        "backfilled",
        "never",
        "eligible",
        "placed_nodes",
        "end",
        "running_at",
        "ready_at",
        "saved_s",
    )

    def __init__(self, job: Job, n: int):
        self.job, self.n = job, n
        self.state = PENDING
        self.pool: PoolState | None = None
        self.alloc: list[tuple[Node, int]] = []
        self.start = -1.0
        self.token = 0
        """Bumped on every start and stop, so stale END and TICK events are ignored."""
        self.starts: list[float] = []
        self.preempts = 0
        self.backfilled = False
        self.never: str | None = None
        self.eligible = job.submit_s
        """Not started before this time (Kueue's requeue backoff; Slurm's requeue eligibility)."""
        self.placed_nodes: tuple[str, ...] = ()
        self.end = -1.0
        self.running_at = -1.0
        self.ready_at = -1.0
        self.saved_s = 0.0
        """Run time kept in checkpoints across restarts (``Job.checkpoint_s``)."""
        """When all pods of its latest start are running (placement + the start path; Kubernetes schedulers)."""
        """When all its pods were first running (Kubernetes schedulers; -1: not yet)."""


class Host(Protocol):
    """The engine as a scheduler (and the autoscaler) may use it."""

    cluster: ClusterModel
    options: SimOptions
    pools: dict[str, PoolState]
    dirty: bool
    """Set to ask for a scheduling pass at the end of the current instant."""
    reclaiming: bool
    """True while a spot reclaim stops jobs (``released`` is then called for a lost node)."""
    up_gpus: float
    power_pools: set[str]
    """Slurm pools that follow the queue in this run (power saving), empty otherwise."""

    def push(self, t: float, kind: int, payload: Any = None) -> None: ...
    def start(self, js: JobState, pool: PoolState, chosen: Sequence[Node], backfilled: bool = False) -> None: ...
    def preempt(self, js: JobState, requeue: bool, counted: bool = True) -> None: ...
    def gpus_held(self, js: JobState) -> float: ...
    def node_on(self, pool: PoolState, node: Node, ready: bool) -> None: ...
    def node_off(self, pool: PoolState, node: Node, bill: bool = True) -> None: ...


J = TypeVar("J", bound=JobState)


class Scheduler(Protocol, Generic[J]):
    """A scheduler family, over its own ``JobState`` subclass ``J``."""

    def new_job(self, job: Job, n: int) -> J:
        """The scheduler's job state for a submitted job (the engine creates every job through this)."""

    def submit(self, js: J, now: float) -> None: ...
    def schedule(self, now: float) -> None: ...
    def released(self, js: J, now: float, requeue: bool) -> None: ...
    def tick(self, now: float, payload: Any) -> None: ...
    def pending(self) -> int: ...
    def unplaced(self) -> list[J]:
        """Admitted jobs whose pods wait for nodes (the autoscaler's demand); [] where nodes never scale."""

    def unbilled_tail(self, pool: PoolState, end: float) -> float:
        """Node-seconds of ``pool`` paid after ``end`` because of scaling the scheduler drives itself (Slurm power
        saving: idle nodes suspend after SuspendTime, then their Kubernetes nodes go); 0.0 where it drives none."""


SchedulerFactory = Callable[[Host], "Scheduler[Any]"]
