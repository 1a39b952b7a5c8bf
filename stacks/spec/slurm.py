"""Slurm-only settings of the scheduling spec (``gpu-cluster:scheduling.slurm``): shape, ranges and defaults.

Rules that need the pools, the catalog or several fields at once live in ``stacks/validate/slurm.py``.
"""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from stacks.spec.model_base import SpecModel
from stacks.spec.slurm_access import SlurmAccess
from stacks.spec.slurm_backup import SlurmBackup


class SlurmPreemptType(str, Enum):
    AUTO = "auto"
    QOS = "qos"
    PARTITION_PRIO = "partition_prio"
    NONE = "none"


class SlurmPreemptMode(str, Enum):
    REQUEUE = "REQUEUE"
    CANCEL = "CANCEL"


class SlurmPriorityWeights(SpecModel):
    fair_share: int = Field(
        10000,
        ge=0,
        le=4_294_967_295,
        description=("PriorityWeightFairshare. Needs accounting (slurmctld ignores it without slurmdbd)."),
    )
    age: int = Field(
        1000,
        ge=0,
        le=4_294_967_295,
        description=("PriorityWeightAge. Needs accounting (slurmctld ignores it without slurmdbd)."),
    )
    job_size: int = Field(1000, ge=0, le=4_294_967_295, description="PriorityWeightJobSize.")
    qos: int = Field(2000, ge=0, le=4_294_967_295, description="PriorityWeightQOS.")


class SlurmBackfill(SpecModel):
    interval_seconds: int = Field(30, ge=1, le=10800, description="`bf_interval`: seconds between backfill cycles.")
    window_minutes: int = Field(
        1440,
        ge=1,
        le=43200,
        description=(
            "`bf_window`: how far ahead backfill plans, in minutes. Keep it at least the longest job time limit."
        ),
    )
    resolution_seconds: int = Field(60, ge=1, le=3600, description="`bf_resolution`: time resolution of the plan.")
    max_job_test: int = Field(1000, ge=1, le=1_000_000, description="`bf_max_job_test`: jobs considered per cycle.")


class SlurmPartition(SpecModel):
    name: str = Field(description="Partition name (letters, digits, `-`, `_`); not a pool name and not `all`.")
    pools: list[str] = Field(min_length=1, description="Pools (from `nodePools`) whose NodeSets form the partition.")
    priority_tier: int = Field(
        1,
        ge=0,
        le=65533,
        description=(
            "PriorityTier. With `preemptType: partition_prio`, jobs in a higher tier preempt jobs in a lower one. Default 1."
        ),
    )
    default: bool = Field(False, description="The partition jobs use when they name none. At most one.")


class SlurmNodeSet(SpecModel):
    pool: str = Field(description="Pool (from `nodePools`) this NodeSet runs on.")
    gres: str | None = Field(
        None,
        description=(
            "Expected GRES, e.g. `gpu:h100:8`. Omitted: from the catalog. Set, it must equal the catalog's GPU model and "
            "count (a mismatch leaves GPUs unschedulable, Slinky slurm-operator#57, #101)."
        ),
    )
    cpus: int | None = Field(
        None,
        ge=1,
        description=(
            "CPUs Slurm may allocate per node. Omitted: the machine's vCPUs minus the system reserve "
            "(6 %, at least 2). At most the vCPUs minus 1."
        ),
    )
    real_memory_mib: int | None = Field(
        None,
        ge=1024,
        description=(
            "RealMemory per node in MiB. Omitted: RAM minus the system reserve (8 %, at least 6 GiB). "
            "At most the RAM minus 2 GiB."
        ),
    )


class SlurmScaling(SpecModel):
    enabled: bool = Field(
        True,
        description=(
            "Pools with `minNodes < maxNodes` follow the queue: Slurm power saving resumes nodes for pending jobs "
            "(ResumeProgram scales the pool's NodeSet up) and suspends nodes idle for `idleMinutes` (SuspendProgram "
            "scales it down, never below `minNodes`). `false`: every NodeSet runs `maxNodes` slurmd pods, so the pool "
            "scales to maxNodes and stays there (priced at maxNodes). Default true."
        ),
    )
    idle_minutes: int = Field(
        10, ge=1, le=1440, description=("SuspendTime: minutes a node stays idle before Slurm releases it. Default 10.")
    )
    resume_timeout_minutes: int = Field(
        20,
        ge=5,
        le=120,
        description=(
            "ResumeTimeout: minutes a resumed node may take to register (GPU node creation, driver, image pull) before "
            "Slurm marks it DOWN and requeues its job. Default 20."
        ),
    )


class SlurmQosLimits(SpecModel):
    """Limits of one QOS (a priority class), set with ``sacctmgr modify qos``; each omitted one is no limit. A QOS with
    a limit also gets ``Flags=DenyOnLimit``: a job that could never meet a per-job limit is refused at submission
    instead of pending for ever."""

    max_wall_minutes: int | None = Field(
        None,
        ge=1,
        le=525_600,
        description=(
            "`MaxWall`: the longest time limit a job of this class may ask for, in minutes. A longer `--time` is "
            "refused at submission; a job with no `--time` gets this limit."
        ),
    )
    max_gpus_per_user: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description=(
            "`MaxTRESPerUser=gres/gpu=N`: GPUs one user's running jobs of this class may hold together. A job "
            "asking for more is refused; one that would take its user over it waits (`QOSMaxGRESPerUser`)."
        ),
    )
    grp_gpus: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description=(
            "`GrpTRES=gres/gpu=N`: GPUs all running jobs of this class may hold together. A job asking for more "
            "is refused; one that would take the class over it waits (`QOSGrpGRES`)."
        ),
    )


class SlurmSettings(SpecModel):
    accounting: bool | None = Field(
        None,
        description=(
            "Run slurmdbd with a MariaDB database (persistent volume). Omitted: on when fair-share or age priority "
            "weights are above 0 (slurmctld ignores both without slurmdbd); `false` with such a weight is an error."
        ),
    )
    all_pools_partition: bool = Field(True, description="Add a partition `all` spanning every pool. Default true.")
    partitions: list[SlurmPartition] = Field(
        default_factory=list,
        description=("Extra partitions over several pools. Every pool always has its own partition named after it."),
    )
    priority_weights: SlurmPriorityWeights = Field(
        default_factory=SlurmPriorityWeights, description="Multifactor priority weights."
    )
    backfill: SlurmBackfill = Field(default_factory=SlurmBackfill, description="Backfill scheduler parameters.")
    preempt_type: SlurmPreemptType = Field(
        SlurmPreemptType.AUTO,
        description=(
            "`qos`: a priority class (QOS) preempts lower ones; `partition_prio`: a higher `priorityTier` partition "
            "preempts a lower one; `none`. Default `auto`: `qos` when there are priority classes and "
            "`preemption.withinQueue` is not `Never`, else `none`."
        ),
    )
    preempt_mode: SlurmPreemptMode = Field(
        SlurmPreemptMode.REQUEUE, description=("What happens to a preempted job: `REQUEUE` (default) or `CANCEL`.")
    )
    qos_preempts: dict[str, list[str]] = Field(
        default_factory=dict,
        description=("Per priority class, the classes it may preempt. Omitted: every class with a lower value."),
    )
    qos_limits: dict[str, SlurmQosLimits] = Field(
        default_factory=dict,
        description=(
            "Per priority class, its QOS limits: `maxWallMinutes` (MaxWall), `maxGpusPerUser` (MaxTRESPerUser) and "
            "`grpGpus` (GrpTRES). Needs accounting. Omitted: no QOS limits."
        ),
    )
    default_qos: str | None = Field(
        None, description=("Priority class every account uses when a job names none. Omitted: the lowest-valued class.")
    )
    block_size: int | None = Field(
        None,
        ge=1,
        description=(
            "Nodes per topology block for multi-node pools (`topology.level: block`). Omitted: nodes per NVLink "
            "domain when a domain spans nodes, else the pool's compact placement group (all its nodes). Each "
            "multi-node pool's `maxNodes` must be a multiple of it."
        ),
    )
    node_sets: list[SlurmNodeSet] = Field(
        default_factory=list,
        description=("Per-pool NodeSet overrides: expected GRES, CPUs and memory Slurm may allocate."),
    )
    scaling: SlurmScaling = Field(
        default_factory=SlurmScaling,
        description=("Pools that grow when jobs pend and shrink when idle (Slurm power saving driving the NodeSets)."),
    )
    access: SlurmAccess = Field(
        default_factory=SlurmAccess,
        description=("How users reach Slurm without its keys: the login pods and per-user slurmrestd tokens."),
    )
    backup: SlurmBackup = Field(
        default_factory=SlurmBackup,
        description=("Scheduled dumps of the accounting database to a bucket (with accounting)."),
    )
