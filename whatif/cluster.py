"""The stack as the simulator sees it: pools, queues and the Kueue or Slurm settings, as plain data
(``cluster_build.py`` reads them from the spec and what ``render/`` renders). Pure: no Pulumi."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from render.kueue_config import REQUEUE_BACKOFF_BASE_SECONDS, REQUEUE_BACKOFF_MAX_SECONDS

BLOCK_SCALE_DOWN_LEAD_S = 1800.0
"""EC2 starts terminating a capacity block's instances 30 minutes before its end (EC2 user guide, "Work with
Capacity Blocks"; ``stacks/plan/capacity_block.EC2_TERMINATION_LEAD``, not imported here: the what-if's import floor)."""
DEFAULT_QUEUE = "default"
"""The one queue of a stack without ``scheduling`` (the plain Kubernetes scheduler, first come first served)."""
MONTH_S = 30 * 86400


@dataclass(frozen=True)
class PoolModel:
    name: str
    gpus_per_node: int
    slices_per_gpu: int
    min_nodes: int
    max_nodes: int
    usd_per_node_hour: float | None
    """None: no public price (reservation-bound A4X); the report's $ figures of the pool are None."""
    capacity: str
    exclusive: bool
    """Slurm on a multi-node pool: a job owns whole nodes (the partition's OverSubscribe=EXCLUSIVE)."""
    block_nodes: int | None
    """Nodes per topology block when placement is by block, else None."""
    block_required: bool
    provision_s: float
    interruptions_per_node_s: float
    gpu_type: str
    cpus_per_node: int
    pull_s: float = 0.0
    """A node without the pool's job image pulls (or streams, or reads) it this long before the pods start."""
    prepull: bool = False
    """The pre-pull DaemonSet pulls the image as a node joins (warm by the time the pull is done)."""
    nvlink_domain_nodes: int | None = None
    """Rack-scale NVLink (GB200 NVL72): nodes per NVLink domain (a topology block); None elsewhere."""
    committed_nodes: int = 0
    """Nodes billed for the whole run whether they run or not (reservations, capacity blocks): the one billing model
    of ``stacks/plan/billing.py``; the rest are billed while up."""
    drain_lead_s: float = BLOCK_SCALE_DOWN_LEAD_S
    """How long before a capacity block's window ends EC2 starts terminating its instances: 30 minutes, 60 for an
    UltraServer block (``stacks/plan/capacity_block.terminates_at``; set by ``whatif/cluster_build.py``)."""
    window_s: float | None = None
    """A capacity block's window length (the what-if's clock starts at the window's start): its nodes are gone from
    ``drain_s`` on and its fee covers this long, never past it (``stacks/plan/billing.py``). None elsewhere."""
    billing_note: str = ""
    """How the pool's dollars are made (``stacks/plan/billing.billing_note``), printed in every format."""
    compute_domains: bool = False
    cold_range: dict[str, float] | None = None
    """The preview's cold time to running of the pool's largest gang: pods, low, typical, high
    (``stacks/plan/start_time.largest_gang``; the run itself uses the typical factors)."""
    spans_blocks: bool = False
    """A required-block pool whose stack also renders a runtime for gangs of whole blocks (GKE racks: the
    ``torch-<pool>-block`` runtime, ``spanning_annotations``): a gang of several whole blocks can be placed."""
    """Jobs on the pool get their IMEX channel through a ComputeDomain, which starts with the job's pods (its
    daemons join before the workers run; upstream: ~8 min for 256 pods in one domain, dra-driver-nvidia-gpu#816)."""

    @property
    def drain_s(self) -> float | None:
        """When a capacity block's nodes go: when EC2 starts terminating them, ``drain_lead_s`` before the window
        ends (the rendered node group has scaled to zero before that: ``stacks/plan/capacity_block.py``)."""
        return None if self.window_s is None else max(0.0, self.window_s - self.drain_lead_s)

    @property
    def slices_per_node(self) -> int:
        return self.gpus_per_node * self.slices_per_gpu

    @property
    def max_gpus(self) -> int:
        return self.gpus_per_node * self.max_nodes


@dataclass(frozen=True)
class QuotaModel:
    nominal: int
    """Slices (= GPUs on pools that do not share)."""
    borrowing_limit: int | None
    lending_limit: int | None


@dataclass(frozen=True)
class QueueModel:
    name: str
    weight: int
    quotas: dict[str, QuotaModel]
    """Pool -> quota, in the ClusterQueue's flavor order."""
    strict_fifo: bool = False
    within_queue: str = "Never"
    reclaim: str = "Never"
    borrow_within_cohort: str = "Never"
    """``preemption.borrowWithinCohort.policy``: may it preempt lower-priority borrowers while borrowing itself?"""
    borrow_threshold: int | None = None
    """``borrowWithinCohort.maxPriorityThreshold``."""
    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    """``flavorFungibility`` (Kueue's defaults)."""


@dataclass(frozen=True)
class KueueModel:
    cohort: str | None
    fair_sharing: bool
    gang_timeout_s: float | None
    backoff_base_s: float = REQUEUE_BACKOFF_BASE_SECONDS
    backoff_max_s: float = REQUEUE_BACKOFF_MAX_SECONDS
    strategies: tuple[str, ...] = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    """``fairSharing.preemptionStrategies`` in the configured order (Kueue's default when none is listed)."""
    requeue_timestamp: str = "Eviction"
    """``waitForPodsReady.requeuingStrategy.timestamp``: Eviction or Creation."""
    recovery_timeout_s: float | None = None
    """``waitForPodsReady.recoveryTimeout`` (Kueue: the timeout when unset; 0: never)."""


@dataclass(frozen=True)
class PartitionModel:
    name: str
    pools: tuple[str, ...]
    tier: int
    default: bool
    def_cpu_per_gpu: int = 0
    """``DefCpuPerGPU``: the CPUs a job asking for GPUs only requests per GPU (0: not rendered)."""


@dataclass(frozen=True)
class PowerModel:
    """Slurm power saving as rendered (``scheduling/slurm_scaling.py``): the pools that follow the queue."""

    pools: dict[str, int]
    """Pool -> minNodes (``SuspendExcNodes=<pool>:<min>``: that many nodes stay powered up)."""
    suspend_time_s: float
    suspend_timeout_s: float
    resume_timeout_s: float


REQUEUE_DELAY_S = 121.0
"""A requeued batch job is held (``Reason=BeginTime``) until ``cred_expire`` (120 s by default) + 1 s: measured on
real Slurm 26.05 (docs/contributing/whatif-validation.md)."""


BATCH_SCHED_DELAY_S = 3.0
"""``SchedulerParameters=batch_sched_delay`` (3 s by default, not rendered): the main scheduler may defer a newly
submitted batch job this long. Only the main scheduler preempts: on real Slurm 26.05 a preemptor submitted at t
requeued its victim 2.2-4.6 s later (docs/contributing/whatif-validation.md), so preemption waits for this delay."""


@dataclass(frozen=True)
class SlurmModel:
    weight_fairshare: int
    weight_age: int
    weight_job_size: int
    weight_qos: int
    bf_interval_s: float
    bf_window_s: float
    bf_resolution_s: float
    bf_max_job_test: int
    preempt: bool
    requeue: bool
    preempt_type: str
    """``qos`` (a QOS preempts the QOS it lists), ``partition_prio`` (a higher PriorityTier partition preempts a lower
    one on shared nodes) or ``none``."""
    accounting: bool
    """Without slurmdbd there are no associations: no GrpTRES caps (and no fair-share or age factors)."""
    qos_priority: dict[str, int]
    qos_preempts: dict[str, tuple[str, ...]]
    default_qos: str | None
    partitions: tuple[PartitionModel, ...]
    fairshare: dict[str, int]
    gpu_caps: dict[str, dict[str, int]]
    """Account -> GPU type -> GrpTRES cap."""
    qos_limits: dict[str, tuple[float | None, int | None, int | None]] = field(default_factory=dict)
    """QOS -> (MaxWall in seconds, MaxTRESPerUser GPUs, GrpTRES GPUs), None: no limit (with accounting only). Every
    QOS with a limit has ``DenyOnLimit``: a job that can never meet one is refused at submission."""
    power: PowerModel | None = None
    """Pools that follow the queue (None: every NodeSet runs maxNodes)."""
    requeue_delay_s: float = REQUEUE_DELAY_S
    batch_sched_delay_s: float = BATCH_SCHED_DELAY_S
    sched_interval_s: float = 60.0
    priority_calc_period_s: float = 300.0
    decay_half_life_s: float = 7 * 86400.0
    max_age_s: float = 7 * 86400.0
    """Slurm defaults the rendered slurm.conf leaves alone (sched_interval, PriorityCalcPeriod, PriorityDecayHalfLife,
    PriorityMaxAge)."""

    def partition(self, name: str | None) -> PartitionModel | None:
        if name is None:
            return next((p for p in self.partitions if p.default), self.partitions[0])
        return next((p for p in self.partitions if p.name == name), None)


@dataclass(frozen=True)
class ClusterModel:
    stack: str
    scheduler: str
    """'slurm', 'kueue', or 'kubernetes' (no scheduling section: one first-come-first-served queue)."""
    pools: dict[str, PoolModel]
    queues: dict[str, QueueModel]
    class_values: dict[str, int]
    default_class: str | None
    kueue: KueueModel | None = None
    slurm: SlurmModel | None = None
    sources: list[str] = field(default_factory=list)
    start: dict[str, float] = field(default_factory=dict)
    """Start-path factors (catalog/data/start-path.csv, with the user's --assume overrides)."""


def slices_for(pool: PoolModel, gpus_per_node: int, share: float | None) -> int:
    """Slices per node a job takes on this pool: whole GPUs × slices, or enough slices to cover a GPU share."""
    if share is None:
        return gpus_per_node * pool.slices_per_gpu
    return max(1, math.ceil(share * pool.slices_per_gpu - 1e-9))
