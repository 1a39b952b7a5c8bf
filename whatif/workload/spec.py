"""Workload files (YAML), as users write them: ``kind: profile`` (per-queue arrival, size, duration and priority
mixes), ``kind: jobs`` (an explicit job list), ``kind: trace`` (a public trace plus the mapping of its tenants onto the
stack's queues). Shape only; checks against the stack live in ``workload/load.py``."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import Field

from stacks.spec.model_base import SpecModel


class DurationKind(str, Enum):
    LOGNORMAL = "lognormal"
    EXPONENTIAL = "exponential"
    FIXED = "fixed"


class ArrivalProcess(str, Enum):
    POISSON = "poisson"
    UNIFORM = "uniform"


class Diurnal(SpecModel):
    amplitude: float = Field(
        ge=0,
        le=1,
        description=(
            "Relative swing of the arrival rate over a day: the rate is `perHour × (1 + amplitude × cos(…))`."
        ),
    )
    peak_hour: float = Field(14, ge=0, lt=24, description="Hour of the day (simulation clock) with the most arrivals.")


class Arrivals(SpecModel):
    per_hour: float = Field(gt=0, description="Mean jobs submitted per hour.")
    process: ArrivalProcess = Field(
        ArrivalProcess.POISSON,
        description=("`poisson` (exponential inter-arrival times, default) or `uniform` (evenly spaced)."),
    )
    diurnal: Diurnal | None = Field(None, description="Day/night pattern. Omitted: a flat rate.")


class Size(SpecModel):
    gpus: int = Field(1, ge=0, description="GPUs per node (0 with `gpuShare`).")
    nodes: int = Field(1, ge=1, description="Nodes (pods of a gang). Default 1.")
    gpu_share: float | None = Field(
        None,
        gt=0,
        lt=1,
        description=("A fraction of one GPU (on pools that share GPUs: enough slices; elsewhere a whole GPU)."),
    )
    weight: float = Field(1, gt=0, description="Relative frequency in the mix. Default 1.")


class Duration(SpecModel):
    distribution: DurationKind = Field(
        DurationKind.LOGNORMAL, description="`lognormal` (default), `exponential`, `fixed`."
    )
    median_minutes: float = Field(
        gt=0, description="Median run time (the mean for `exponential`, the value for `fixed`)."
    )
    sigma: float = Field(1.0, ge=0, le=4, description="Lognormal shape (spread of log run time). Default 1.")
    max_hours: float = Field(72, gt=0, description="Run times are capped here. Default 72.")


class PriorityShare(SpecModel):
    name: str = Field(description="A `scheduling.priorityClasses[].name` of the stack.")
    weight: float = Field(1, gt=0, description="Relative frequency. Default 1.")


class QueueProfile(SpecModel):
    queue: str = Field(description="A `scheduling.queues[].name` of the stack (`default` for a stack without queues).")
    arrivals: Arrivals
    sizes: list[Size] = Field(min_length=1, description="Job-size mix.")
    duration: Duration
    priorities: list[PriorityShare] = Field(default_factory=list, description="Priority mix. Omitted: the default.")
    time_limit_factor: float = Field(
        1.5, ge=1, le=100, description=("Slurm `--time` = run time × this (users over-estimate). Default 1.5.")
    )
    pool: str | None = Field(None, description="Run only on this pool. Omitted: any of the queue's pools.")
    checkpoint_minutes: float | None = Field(
        None,
        gt=0,
        description=(
            "The jobs save their progress this often: a preempted or interrupted job resumes from its last checkpoint. "
            "Omitted: it restarts from the beginning."
        ),
    )


class Outage(SpecModel):
    """A fleet worker the manager cannot reach for a while (MultiKueue's lost worker)."""

    worker: str = Field(description="The worker's name in the manager's `fleet.workers`.")
    at_s: float = Field(ge=0, description="When the manager loses the worker, seconds from the start.")
    for_s: float = Field(gt=0, description="How long it stays unreachable, in seconds.")


class Profile(SpecModel):
    kind: Literal["profile"]
    description: str = ""
    hours: float = Field(gt=0, le=24 * 366, description="How long jobs keep arriving, in hours.")
    queues: list[QueueProfile] = Field(min_length=1)
    outages: list[Outage] = Field(
        default_factory=list,
        description=("Fleet manager stacks only: workers the manager loses for a while. Omitted: none."),
    )


class JobEntry(SpecModel):
    id: str
    submit_s: float = Field(ge=0)
    queue: str
    gpus_per_node: int = Field(ge=0)
    nodes: int = Field(1, ge=1)
    run_s: float = Field(gt=0)
    time_limit_s: float | None = Field(None, gt=0)
    priority: str | None = None
    pool: str | None = None
    gpu_share: float | None = Field(None, gt=0, lt=1)
    checkpoint_s: float | None = Field(None, gt=0, description="Checkpoint interval; omitted: restart from the start.")
    user: str | None = Field(
        None, min_length=1, description="Slurm: the submitting user (QOS `maxGpusPerUser`); omitted: a user of its own."
    )


class JobList(SpecModel):
    kind: Literal["jobs"]
    description: str = ""
    jobs: list[JobEntry] = Field(min_length=1)
    outages: list[Outage] = Field(
        default_factory=list,
        description=("Fleet manager stacks only: workers the manager loses for a while. Omitted: none."),
    )


class TraceFormat(str, Enum):
    ALIBABA_OPENB = "alibaba-openb"
    HELIOS = "helios-cluster-log"
    PHILLY = "philly-job-log"


class TraceMapping(SpecModel):
    by: str = Field(
        description=(
            "Trace column that names the tenant: `qos` (Alibaba), `vc` or `user` (Helios/Acme, Philly), or `hash` to "
            "spread jobs over `weights` by a hash of the job id."
        )
    )
    queues: dict[str, str] = Field(default_factory=dict, description="Trace value -> stack queue.")
    default: str | None = Field(None, description="Queue for values not in `queues`. Omitted: such jobs are an error.")
    weights: dict[str, float] = Field(default_factory=dict, description="`by: hash`: queue -> relative share.")
    priorities: dict[str, str] = Field(default_factory=dict, description="Trace `by` value -> priority class.")


class Trace(SpecModel):
    kind: Literal["trace"]
    description: str = ""
    format: TraceFormat
    path: str = Field(description="The trace file, relative to this workload file (or absolute).")
    mapping: TraceMapping
    window_hours: float | None = Field(None, gt=0, description="Replay only the first hours. Omitted: all of it.")
    time_limit_factor: float = Field(1.5, ge=1, le=100, description="Slurm `--time` = run time × this. Default 1.5.")
    pool: str | None = Field(None, description="Run every job on this pool. Omitted: the queue's pools.")
    gpus_per_node: int | None = Field(
        None,
        ge=1,
        description=(
            "Helios/Acme/Philly: GPUs per node of the traced cluster, to split `gpu_num` when `node_num` is absent. "
            "Omitted: 8."
        ),
    )
