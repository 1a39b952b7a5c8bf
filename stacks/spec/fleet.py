"""The fleet section (``gpu-cluster:fleet``): this stack's part in a MultiKueue fleet. Shape only.

A fleet is several stacks, each its own cluster and ``pulumi up``. One **manager** runs Kueue's MultiKueue: it holds
the fleet's queues and quota and dispatches each job to **workers**, whose own Kueue admits and runs it. The manager
reads each worker's outputs through ``pulumi.StackReference``. Cross-field rules live in ``stacks/validate/fleet.py``.
"""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from catalog import GpuModel
from stacks.spec.model_base import SpecModel
from stacks.spec.scheduling import PriorityClass

FLEET_GPU_LABEL = "gpu-cluster/fleet-gpu"
"""Node label (and Kueue flavor node label) naming a fleet worker pool's GPU model, e.g. ``h100-80gb``."""
KUBECONFIG_OUTPUT = "fleetKubeconfig"
"""The worker's stack output (a Pulumi secret) the manager reads through its StackReference."""
FACTS_OUTPUT = "fleet"
"""A fleet stack's non-secret facts output (role, queues, GPUs, Kueue version, API access)."""
RUNTIME_IMAGE_OUTPUT = "fleetRuntimeImage"
"""The manager's stack output: the fleet runtimes' image by digest (``<repository>:<tag>@sha256:<digest>``), resolved
once on the manager; each worker with ``fleet.manager`` runs its fleet runtimes on it, so the manager's Workload and
the worker's pods name the same bytes even when the tag moved between the stacks' deploys."""
EGRESS_OUTPUT = "fleetEgressAddresses"
"""The manager's egress addresses output (a list of CIDRs, /32 for a NAT address): reserved by gpu-cluster (GKE),
read from the manager's NAT gateways (EKS), or as declared in ``egressCidrs``. A worker with ``fleet.manager`` admits
them through a StackReference; known only once the manager is deployed."""
MAX_EGRESS_ADDRESSES = 16
"""Static NAT addresses a manager may reserve (one address gives 64,512 ports per protocol: a small manager needs one)."""
MAX_WORKERS = 20
"""A MultiKueueConfig lists 1-20 clusters (Kueue 0.16+, #8614)."""


class FleetRole(str, Enum):
    MANAGER = "manager"
    WORKER = "worker"


class Dispatcher(str, Enum):
    ALL_AT_ONCE = "AllAtOnce"
    INCREMENTAL = "Incremental"


class FleetWorker(SpecModel):
    name: str = Field(
        description=(
            "The worker's name in the fleet: its MultiKueueCluster and kubeconfig Secret are named after it (a "
            "Kubernetes name, at most 40 characters)."
        )
    )
    stack: str = Field(
        description=(
            "The worker's stack, `<org>/<project>/<stack>` as `pulumi.StackReference` takes it. Offline, the preview "
            "reads `Pulumi.<stack>.yaml` (the last segment) from this repository."
        )
    )


class FleetQuota(SpecModel):
    gpu_model: GpuModel = Field(
        description=(
            "GPU model, e.g. `H100_80GB`: jobs name the fleet runtime of this model (`fleet-h100-80gb`) and run on "
            "the workers' pools of that model."
        )
    )
    gpus: int = Field(ge=0, description="GPUs of this model the queue may hold across the fleet (manager quota).")


class FleetQueue(SpecModel):
    name: str = Field(
        description=(
            "Queue name: the manager's ClusterQueue and LocalQueue. Every worker needs a queue of the same name and "
            "namespace in its `scheduling.queues` (Kueue runs the dispatched job in the worker's LocalQueue)."
        )
    )
    namespace: str | None = Field(None, description="Namespace of the LocalQueue. Omitted: the queue's name.")
    quotas: list[FleetQuota] = Field(min_length=1, description="GPUs per model the queue may hold fleet-wide.")


class Fleet(SpecModel):
    role: FleetRole = Field(
        description=(
            "`manager` (runs MultiKueue and the fleet's queues; may have no GPU pool) or `worker` (runs the jobs; "
            "needs `scheduling.workload: kubeflow`)."
        )
    )
    manager: str | None = Field(
        None,
        description=(
            "Worker only: the fleet manager's stack, `<org>/<project>/<stack>`. This cluster's API then admits the "
            "addresses in the manager's `fleetEgressAddresses` output, read through a `pulumi.StackReference` at deploy "
            "(unknown offline; the reachability rule checks that this reference is there), besides "
            "`cluster.authorizedNetworks`. Omitted: only `cluster.authorizedNetworks`, which must then list the "
            "manager's `egressCidrs`."
        ),
    )
    token_generation: int = Field(
        1,
        ge=1,
        description=(
            "Worker only: the generation of the static ServiceAccount token the manager uses. Raise it to rotate the "
            "token: this stack's `pulumi up` replaces the token Secret (the old token stops working), then the "
            "manager's `pulumi up` reads the new kubeconfig. Default 1."
        ),
    )
    workers: list[FleetWorker] = Field(
        default_factory=list,
        description=(
            "Manager only: the worker stacks, 1 to 20, each once. The order is the Incremental dispatcher's order."
        ),
    )
    dispatcher: Dispatcher = Field(
        Dispatcher.ALL_AT_ONCE,
        description=(
            "Manager only: `AllAtOnce` (default: a job is offered to every worker, the first to admit it runs it) or "
            "`Incremental` (`incrementalStepSize` workers at a time in `workers` order, more every 5 minutes)."
        ),
    )
    incremental_step_size: int = Field(
        3, ge=1, description=("Manager only, `Incremental`: workers nominated per round. Default 3 (Kueue's default).")
    )
    queues: list[FleetQueue] = Field(
        default_factory=list,
        description=("Manager only: the fleet's queues with their fleet-wide GPU quota per model."),
    )
    egress_addresses: int | None = Field(
        None,
        ge=0,
        le=MAX_EGRESS_ADDRESSES,
        description=(
            "Manager only, GKE: static external IPv4 addresses (`gcp.compute.Address`) gpu-cluster reserves for the "
            "manager's Cloud NAT, which then uses only them (`MANUAL_ONLY`); exported as `fleetEgressAddresses` (/32 "
            "each). Needs gpu-cluster's Cloud NAT (`cluster.cloudNat`, on by default with the default network). Omitted: "
            "1 when gpu-cluster makes the Cloud NAT and `egressCidrs` is empty, else 0. On EKS gpu-cluster reads the "
            "Elastic IPs of the NAT gateways the manager's subnets route through instead (it does not build the VPC)."
        ),
    )
    egress_cidrs: list[str] = Field(
        default_factory=list,
        description=(
            "Manager only: the manager's egress addresses when its NAT is not gpu-cluster's: a network you bring with "
            "its own Cloud NAT, an EKS VPC whose egress leaves through a transit gateway or a corporate NAT. Exported "
            "as `fleetEgressAddresses` instead of reserved or looked-up addresses; workers admit them through "
            "`fleet.manager` or by listing them in `cluster.authorizedNetworks`. Empty (default): gpu-cluster reserves "
            "(GKE) or looks up (EKS) the addresses."
        ),
    )
    gc_interval_seconds: int = Field(
        60,
        ge=0,
        description=(
            "Manager only: how often MultiKueue deletes orphaned copies on the workers (`multiKueue.gcInterval`). "
            "0 turns the collector off. Default 60."
        ),
    )
    worker_lost_timeout_seconds: int = Field(
        900,
        ge=1,
        description=(
            "Manager only: how long a job waits for a disconnected worker before it is requeued "
            "(`multiKueue.workerLostTimeout`). Default 900."
        ),
    )
    priority_classes: list[PriorityClass] = Field(
        default_factory=list,
        description=(
            "Manager only: the fleet's job priorities, rendered as Kueue WorkloadPriorityClasses on the manager (a job "
            "labelled `kueue.x-k8s.io/priority-class` gets no Workload where its class is missing). Every worker needs "
            "the same classes with the same values in its `scheduling.priorityClasses` (checked by the pack). Empty: "
            "fleet jobs carry no priority class."
        ),
    )
    runtime_image: str | None = Field(
        None,
        alias="runtimeImage",
        description=(
            "Manager only: the fleet runtimes' image pinned by digest, `<repository>:<tag>@sha256:<64 hex>`, resolved once "
            "(`crane digest <repository>:<tag>`) and stored here. The manager's runtimes run it and it is exported as "
            "`fleetRuntimeImage` for the workers, so a manager deploy never moves it. Omitted: the runtime image's tag "
            "is resolved to its digest at every manager deploy; when the tag has moved, every worker must be deployed "
            "again after the manager (the preview says so), or Kueue finds the copies out of sync."
        ),
    )
    origin: str = Field(
        "multikueue",
        description=(
            "Manager only: the label value marking the manager's copies on the workers (`multiKueue.origin`). Two "
            "managers sharing a worker need different origins. Default `multikueue`."
        ),
    )


def gpu_slug(model: GpuModel) -> str:
    """``H100_80GB`` -> ``h100-80gb`` (a label value and a name part)."""
    return model.value.lower().replace("_", "-")
