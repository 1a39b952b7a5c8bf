"""The simulator's public data: a job as submitted, the run options, and what happened to each job.

Times are seconds from the simulation start (t = 0). The fields are documented for the real-Slurm comparison harness
too (docs/whatif.md, "Public API (for other tools)").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Job:
    id: str
    submit_s: float
    queue: str
    """A ``scheduling.queues[].name``: the Kueue ClusterQueue or Slurm account."""
    gpus_per_node: int
    """Physical GPUs per node (Slurm ``--gpus-per-node``); 0 with ``gpu_share`` for a slice of one GPU."""
    run_s: float
    """How long the job runs once started (it ends at start + min(run_s, time_limit_s))."""
    nodes: int = 1
    time_limit_s: float | None = None
    """Slurm ``--time``: backfill plans with it and the job is killed at it. None: ``run_s`` (a perfect estimate)."""
    priority: str | None = None
    """A ``scheduling.priorityClasses[].name``; None: the default class."""
    pool: str | None = None
    """Restrict to one pool (Slurm: its own partition; Kueue: that flavor). None: the queue's pools / the default
    partition."""
    gpu_share: float | None = None
    """A fraction of one GPU (0 < share < 1) on a pool that shares GPUs (time-slicing, MPS, MIG): the job takes enough
    slices to cover it; on a pool that does not share, a whole GPU. None: whole GPUs."""
    checkpoint_s: float | None = None
    """The job saves its progress this often: preempted or interrupted, it resumes from its last checkpoint (work
    lost at most this). None: it restarts from the beginning."""
    user: str | None = None
    """Slurm: the submitting user, for per-user QOS limits (``MaxTRESPerUser``). None: a user of its own."""

    @property
    def gpus(self) -> float:
        """GPUs the job holds while it runs (a shared job counts its share)."""
        return self.gpu_share if self.gpu_share is not None else float(self.gpus_per_node * self.nodes)

    @property
    def limit_s(self) -> float:
        return self.time_limit_s if self.time_limit_s is not None else self.run_s


@dataclass
class Workload:
    """The jobs of one workload file (``workload/load.py`` reads them)."""

    name: str
    kind: str
    jobs: list[Job]
    description: str = ""
    attribution: list[str] = field(default_factory=list)
    """Licence and citation of every trace the jobs come from (shown in every output)."""
    warm_up: set[str] = field(default_factory=set)
    """Jobs that only set the initial state (trace carry-in): left out of the wait statistics."""
    recorded_waits: dict[str, float] = field(default_factory=dict)
    """Trace: job id -> the queue wait the trace recorded (for side-by-side comparison)."""
    notes: list[str] = field(default_factory=list)
    outages: list[tuple[str, float, float]] = field(default_factory=list)
    """Fleet: (worker, from s, for s) the manager cannot reach that worker."""


DRAIN_LIMIT_S = 30 * 86400.0
"""Without a horizon the run ends when every job has ended (or can never run again). It is cut only when this long
has passed since the last submit, job end, or stop of a job that kept work at a checkpoint (its remaining work
shrank: progress) and no job that was running then is still running: jobs requeued or
evicted over and over (gang requeues, a quota above capacity) must not run forever, but a job that is simply long
runs to its end. A cut run is billed as a horizon cut and says so in every format."""


@dataclass(frozen=True)
class SimOptions:
    nodes_up: Literal["min", "max"] = "min"
    """Nodes running at t = 0: the pools' minNodes (the autoscaler adds nodes, with the catalog's provisioning delay)
    or maxNodes (every node up and never scaled). Slurm pools that follow the queue (``scheduling.slurm.scaling``)
    start at minNodes and scale by Slurm power saving (``slurm_power.py``); other Slurm pools run maxNodes."""
    spot_interruptions: bool = True
    spot_interruptions_per_node_month: float | None = None
    """None: the catalog's rate for the pool's cloud and capacity type."""
    scheduler: Literal["auto", "slurm", "kueue"] = "auto"
    horizon_s: float | None = None
    """Stop here; None: when every job has ended or can never start."""
    backfill: bool = True
    """Slurm only: False runs the main (strict priority) scheduler alone, for 'what does backfill buy' experiments."""
    assume: dict[str, float] = field(default_factory=dict)
    """Overrides of the start-path factors (catalog/data/start-path.csv), e.g. {"image_gb": 30}."""
    progress: Any = None
    """Called as progress(sim_time_s, horizon_s) now and then (the CLI's progress bar); None: silent."""
    price_overrides: tuple[dict, ...] = ()
    """Negotiated prices in the policy pack's priceOverrides form (``--policy-pack-config``): the preview's lookup."""


@dataclass(frozen=True)
class JobOutcome:
    id: str
    start_s: float | None
    end_s: float | None
    starts: tuple[float, ...] = ()
    pool: str | None = None
    nodes: tuple[str, ...] = ()
    preemptions: int = 0
    never_startable: str | None = None
    backfilled: bool = False
    running_s: float | None = None
    """Kubernetes schedulers: when all its pods were first running (placement + image pull + pod start)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "startS": self.start_s,
            "endS": self.end_s,
            "starts": list(self.starts),
            "pool": self.pool,
            "nodes": list(self.nodes),
            "preemptions": self.preemptions,
            "neverStartable": self.never_startable,
            "backfilled": self.backfilled,
            "runningS": self.running_s,
        }


@dataclass
class PoolUsage:
    """Per-pool totals of one run (GPU-seconds count physical GPUs; a shared slice counts its share)."""

    pool: str
    gpus_per_node: int
    usd_per_node_hour: float | None
    """None: the pool's price is unknown (reservation-bound A4X); every $ figure of it is then None."""
    paid_node_s: float = 0.0
    """Node-seconds paid for (``stacks/plan/billing.py``): committed nodes for the whole run, the rest while up."""
    allocated_gpu_s: float = 0.0
    lost_gpu_s: float = 0.0
    """GPU-seconds of work thrown away by preemption or spot interruption (the job restarts from the beginning)."""
    interruptions: int = 0


@dataclass
class Sample:
    t: float
    allocated_gpus: float
    up_gpus: float
    pending: int


@dataclass
class SimResult:
    scheduler: str
    horizon_s: float
    jobs: dict[str, JobOutcome]
    pools: dict[str, PoolUsage]
    samples: list[Sample] = field(default_factory=list)
    preemptions: int = 0
    pods_ready_evictions: int = 0
    """Evictions by Kueue's waitForPodsReady (pods not all running in time): not preemptions, reported beside them."""
    queue_gpu_s: dict[str, float] = field(default_factory=dict)
    """Allocated GPU-seconds per queue (lost work included)."""
    time_limit_kills: dict[str, list[str]] = field(default_factory=dict)
    """Jobs ended at their time limit before their work was done, by the limit that ended them."""
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Configuration defects the run exposed (a preemption loop): shown loudly in every format."""
    cut: str | None = None
    """What stopped the run with jobs left that could still run (``--horizon-hours``, the drain limit); it is then
    billed to ``horizon_s`` as a horizon cut. None: the run went to its end."""
