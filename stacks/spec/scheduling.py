"""The cloud-neutral scheduling spec (``gpu-cluster:scheduling``): one section, rendered to Kueue or to Slurm.

Shape only lives here; cross-field rules (quotas vs pool capacity, cohort needed for borrowing, names) live in
``stacks/validate/scheduling.py``. Renderers in ``render/`` read this model plus the pools' derived facts.
"""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from stacks.spec.model_base import SpecModel
from stacks.spec.slurm import SlurmPriorityWeights, SlurmSettings  # noqa: F401 (re-exported; Slurm owns its models)


class Workload(str, Enum):
    KUBEFLOW = "kubeflow"
    SLURM = "slurm"


class TopologyLevel(str, Enum):
    """Where a gang's pods/nodes must (or should) land together."""

    HOST = "host"
    NVLINK = "nvlink"
    """One rack-scale NVLink domain (GB200 NVL72: 72 GPUs, 18 nodes): GKE ``gce-topology-subblock``, EKS
    ``nvidia.com/gpu.clique``; Slurm ``topology/block`` with the domain as the block. Rack-scale pools only."""
    BLOCK = "block"
    ZONE = "zone"


class TopologyMode(str, Enum):
    REQUIRED = "required"
    PREFERRED = "preferred"
    NONE = "none"


class QueueingStrategy(str, Enum):
    BEST_EFFORT_FIFO = "BestEffortFIFO"
    STRICT_FIFO = "StrictFIFO"


class WithinQueuePreemption(str, Enum):
    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"
    LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority"


class ReclaimPreemption(str, Enum):
    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"
    ANY = "Any"


class PoolQuota(SpecModel):
    pool: str = Field(description="Name of a GPU pool in `nodePools`.")
    gpus: int = Field(ge=0, description="Nominal GPU quota the queue owns in this pool (physical GPUs).")
    borrowing_limit: int | None = Field(
        None,
        ge=0,
        description=("Most GPUs the queue may borrow from its cohort in this pool. Omitted: no limit. Needs `cohort`."),
    )
    lending_limit: int | None = Field(
        None,
        ge=0,
        description=(
            "Most of its unused GPUs the queue lends to the cohort. Omitted: all of them. Kueue only: refused with "
            "`workload: slurm`."
        ),
    )


class Queue(SpecModel):
    name: str = Field(description="Team / queue name (a Kubernetes name; a Slurm account).")
    namespace: str | None = Field(
        None,
        description=(
            "Kubeflow: the team's namespace for its LocalQueue. Omitted: the name. Refused with `workload: slurm`."
        ),
    )
    quotas: list[PoolQuota] = Field(min_length=1, description="GPU quota per pool.")
    fair_share_weight: int = Field(
        1,
        ge=1,
        description=(
            "Relative share under contention: Kueue fair-sharing weight, Slurm account fair-share shares. Default 1."
        ),
    )


class PriorityClass(SpecModel):
    name: str = Field(description="Priority class name (Kueue WorkloadPriorityClass, Slurm QOS).")
    value: int = Field(description="Higher runs first and may preempt lower.")
    description: str = Field("", description="Shown to users.")


class BorrowPolicy(str, Enum):
    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"


class BorrowWithinCohort(SpecModel):
    policy: BorrowPolicy = Field(
        description=(
            "LowerPriority: a job that must borrow may preempt lower-priority jobs of other queues that are borrowing; "
            "Never: it waits."
        )
    )
    max_priority_threshold: int | None = Field(
        None, description=("Only jobs up to this priority may be preempted that way. Omitted: any lower priority.")
    )


class Preemption(SpecModel):
    within_queue: WithinQueuePreemption = Field(
        WithinQueuePreemption.LOWER_PRIORITY, description=("Preempt within a queue by priority. Default LowerPriority.")
    )
    reclaim_within_cohort: ReclaimPreemption = Field(
        ReclaimPreemption.ANY,
        description=(
            "Reclaim GPUs lent to the cohort by preempting borrowers. Default Any. Kueue only: refused with "
            "`workload: slurm`."
        ),
    )
    borrow_within_cohort: BorrowWithinCohort | None = Field(
        None,
        description=(
            "Kueue's preemption.borrowWithinCohort on every ClusterQueue. Needs a cohort, `fairSharing: false` (Kueue "
            "allows it only with classical preemption) and, for policy LowerPriority, reclaimWithinCohort other than Never. "
            "Kueue only."
        ),
    )


class FungibilityPolicy(str, Enum):
    MAY_STOP_SEARCH = "MayStopSearch"
    TRY_NEXT_FLAVOR = "TryNextFlavor"


class FlavorFungibility(SpecModel):
    when_can_borrow: FungibilityPolicy = Field(
        FungibilityPolicy.MAY_STOP_SEARCH,
        description=(
            "Kueue ClusterQueue flavorFungibility.whenCanBorrow: MayStopSearch takes the first pool where the job fits, "
            "borrowing or not; TryNextFlavor looks on for a pool where it fits without borrowing. Default MayStopSearch."
        ),
    )
    when_can_preempt: FungibilityPolicy = Field(
        FungibilityPolicy.TRY_NEXT_FLAVOR,
        description=(
            "flavorFungibility.whenCanPreempt: TryNextFlavor looks on for a pool where the job fits without preempting; "
            "MayStopSearch preempts in the first pool where preemption makes room. Default TryNextFlavor."
        ),
    )


class Gang(SpecModel):
    enabled: bool = Field(True, description="All-or-nothing admission of multi-pod jobs. Default true.")
    timeout_seconds: int = Field(
        600,
        ge=30,
        description=(
            "A gang whose pods are not all ready by then is evicted and requeued. Default 600; on a stack with "
            "rack-scale (ComputeDomain) pools, the largest cold gang estimate x 1.5 rounded up to a minute when that is "
            "longer. Set below that estimate, the stack is refused."
        ),
    )
    recovery_timeout_seconds: int | None = Field(
        None,
        ge=0,
        description=(
            "Kueue's waitForPodsReady.recoveryTimeout: how long an admitted workload that lost pods (a spot node "
            "reclaimed) keeps its quota while replacement pods start, before it is evicted and requeued. Default: "
            "timeoutSeconds (Kueue's default); 0 turns the check off (the workload waits admitted)."
        ),
    )


class Topology(SpecModel):
    mode: TopologyMode = Field(
        TopologyMode.PREFERRED,
        description=("`required`, `preferred` (default) or `none`: topology-aware placement of gangs."),
    )
    level: TopologyLevel = Field(
        TopologyLevel.BLOCK,
        description=(
            "`host`, `nvlink` (one GB200 NVL72 NVLink domain; rack-scale pools only), `block` (default) or `zone`."
        ),
    )


class KubeflowSettings(SpecModel):
    katib: bool = Field(
        False,
        description=(
            "Install Katib (hyperparameter tuning) with its own MySQL; the database password is generated as a Pulumi "
            "secret. Default false."
        ),
    )
    pipelines: bool = Field(
        False,
        description=(
            "Install Kubeflow Pipelines (standalone) with its MySQL and MinIO; their credentials are generated as Pulumi "
            "secrets. Default false."
        ),
    )


class SchedulingSpec(SpecModel):
    workload: Workload = Field(description="`kubeflow` (Kueue + Kubeflow Trainer) or `slurm` (Slinky).")
    cohort: str | None = Field(None, description="Cohort the queues share; needed for borrowing and lending.")
    fair_sharing: bool = Field(
        True,
        description=(
            "Kueue fair sharing between the cohort's queues (weights, share-based preemption), on with a cohort. false: "
            "Kueue's classical preemption, which preemption.borrowWithinCohort needs. Kueue only."
        ),
    )
    overcommit: bool = Field(
        False,
        description=(
            "Allow nominal quotas per pool to add up to more than the pool's GPUs at max nodes. Default false."
        ),
    )
    queueing_strategy: QueueingStrategy = Field(
        QueueingStrategy.BEST_EFFORT_FIFO,
        description=(
            "Queue order. Kueue only: refused with `workload: slurm` (Slurm orders jobs by priority, with backfill)."
        ),
    )
    queues: list[Queue] = Field(min_length=1, description="Teams and their GPU quotas.")
    priority_classes: list[PriorityClass] = Field(default_factory=list, description="Job priorities.")
    preemption: Preemption = Field(default_factory=Preemption, description="Preemption policy.")
    flavor_fungibility: FlavorFungibility = Field(
        default_factory=FlavorFungibility,
        description=(
            "How Kueue picks among a queue's pools (every ClusterQueue). Kueue only: refused with `workload: slurm`."
        ),
    )
    gang: Gang = Field(
        default_factory=Gang,
        description=(
            "Gang (all-or-nothing) admission. Kueue only: refused with `workload: slurm` (Slurm allocates a job's nodes "
            "together)."
        ),
    )
    topology: Topology = Field(default_factory=Topology, description="Topology-aware placement.")
    slurm: SlurmSettings = Field(default_factory=SlurmSettings, description="Slurm-only settings.")
    kubeflow: KubeflowSettings = Field(
        default_factory=KubeflowSettings,
        description=(
            "Kubeflow-only settings: optional Katib and Kubeflow Pipelines next to Kueue and Kubeflow Trainer."
        ),
    )
