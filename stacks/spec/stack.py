"""The typed stack spec: what a user writes under ``gpu-cluster:*`` in ``Pulumi.<stack>.yaml``.

Shape only lives here (types, ranges, defaults). Rules that need the catalog or several fields at once live
in the ``stacks/validate/`` package; every check reports through its ``Issues`` collector (``stacks/validate/issues.py``).
"""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from catalog import Cloud
from stacks.spec.capacity import Capacity

# ClusterMode re-exported: stacks/validate/fleet.py still imports it from here
from stacks.spec.cluster import ClusterMode as ClusterMode, ClusterSpec
from stacks.spec.eks_node import NodeRepair, RootVolume
from stacks.spec.fabric import PoolFabric
from stacks.spec.fleet import Fleet
from stacks.spec.gpu_runtime import GpuRuntime, PoolGpuRuntime
from stacks.spec.pod_start import PodStart
from stacks.spec.model_base import SpecModel
from stacks.spec.scheduling import SchedulingSpec
from stacks.spec.serving import ServingSpec

POOL_LABEL_KEY = "gpu-cluster/pool"
"""Node label naming the pool on every GPU node; Kueue flavors and Slurm NodeSets select by it."""
GPU_TAINT_KEY = "nvidia.com/gpu"


class TaintEffect(str, Enum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"

    @property
    def provider_value(self) -> str:
        """GKE and EKS both spell effects as NO_SCHEDULE / PREFER_NO_SCHEDULE / NO_EXECUTE."""
        return {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}[
            self.value
        ]


class Taint(SpecModel):
    TEXT_FROM_BOOL = frozenset({"value"})  # `pulumi config set --path …taints[0].value true` writes a boolean

    key: str = Field(description="Taint key, e.g. `dedicated`.")
    value: str = Field("", description="Taint value (may be empty).")
    effect: TaintEffect = Field(description="`NoSchedule`, `PreferNoSchedule` or `NoExecute`.")


class UpgradeSettings(SpecModel):
    max_surge: int = Field(
        0,
        ge=0,
        description=(
            "Extra nodes created during an upgrade. Default 0: GPUs are scarce, so a surge node may never come."
        ),
    )
    max_unavailable: int = Field(1, ge=0, description="Nodes upgraded at once. Default 1. Both 0 is refused.")


class Accelerator(SpecModel):
    type: str = Field(description="GKE accelerator type, e.g. `nvidia-tesla-t4` (only N1 hosts need it).")
    count: int | None = Field(
        None,
        description=("GPUs per node. Fixed-GPU machine types (A2/A3/A4/G2) must match the catalog count, or omit it."),
    )


class ZoneAvailabilityOverride(SpecModel):
    zones: list[str] = Field(
        min_length=1,
        description=(
            "Zones of this pool where you know the machine type is offered to you (a reservation, an allow-listed "
            "project, capacity the catalog's sources did not see). Each must be one of the pool's `zones`."
        ),
    )
    reason: str = Field(
        min_length=1,
        description=(
            "Why you know: e.g. the reservation or support case. Shown with the warning that replaces the error."
        ),
    )


class NodePool(SpecModel):
    name: str = Field(
        description=(
            "Pool name: lower-case letters, digits and `-`, at most 32 characters. Becomes the "
            f"`{POOL_LABEL_KEY}` node label and the prefix of the cloud's node pool name."
        )
    )
    machine_type: str = Field(description="GPU machine type from the catalog, e.g. `a3-megagpu-8g`, `p5.48xlarge`.")
    accelerator: Accelerator | None = Field(
        None, description=("GKE N1 hosts only: the attached GPU type and count. Other types take it from the catalog.")
    )
    zones: list[str] = Field(
        min_length=1,
        description=("Zones (GKE) or Availability Zones (EKS) for the nodes. Multi-node pools need exactly one."),
    )
    min_nodes: int = Field(0, ge=0, description="Autoscaler minimum, total over the zones. Default 0 (scale to zero).")
    max_nodes: int = Field(ge=1, description="Autoscaler maximum, total over the zones. Cost at max uses it.")
    capacity: Capacity = Field(default_factory=Capacity, description="How nodes are bought.")
    multi_node: bool = Field(
        False,
        description=(
            "The pool runs jobs spanning nodes: GKE compact placement in one zone; EKS cluster placement group in "
            "one AZ with every EFA interface the instance type has. Omitted: true on a pool of one zone of an "
            "HGX-class machine (8+ GPUs with a GPUDirect/EFA fabric, GPUs not shared) that can reach 4 nodes, since "
            "such a pool is bought for jobs spanning nodes; else false. Write false for a pool of single-node jobs."
        ),
    )
    racks: int | None = Field(
        None,
        ge=1,
        le=64,
        description=(
            "GKE rack-scale machines (A4X, GB200 NVL72) only: how many racks the pool spans. gpu-cluster creates one GKE "
            "node pool per rack (each one sub-block of at most 18 nodes under the `1x72` workload policy); "
            "`minNodes`/`maxNodes` stay totals over the racks and split evenly. Omitted: 1."
        ),
    )
    labels: dict[str, str] = Field(default_factory=dict, description="Extra Kubernetes node labels.")
    taints: list[Taint] = Field(
        default_factory=list,
        description=("Extra taints. Every GPU pool already carries `nvidia.com/gpu=present:NoSchedule`."),
    )
    disk_size_gib: int = Field(200, ge=50, le=65536, description="Boot disk size per node in GiB. Default 200.")
    upgrade: UpgradeSettings = Field(default_factory=UpgradeSettings, description="Surge upgrade settings.")
    gpu_runtime: PoolGpuRuntime | None = Field(
        None,
        description=(
            "Overrides of the stack's `gpuRuntime` for this pool (mode, driver version, sharing, EFA plugin)."
        ),
    )
    local_ssd_ephemeral_storage: bool | None = Field(
        None,
        description=(
            "Back the node's ephemeral storage (images, emptyDir, scratch) with the machine's local disks: GKE local SSDs "
            "(a3-highgpu-8g, a3-megagpu-8g: 16 x 375 GiB), EKS NVMe instance store assembled as RAID0 by nodeadm (p4d, "
            "p5, p5e, p5en, p6-b200). Omitted: on where the machine has them. On GKE changing it replaces the node pool "
            "(on EKS it rolls the nodes); set false to keep a pool created before this setting existed."
        ),
    )
    fabric: PoolFabric | None = Field(
        None,
        description=(
            "The GPU network between nodes. Omitted: `mode: auto` (multi-node pools on fabric-capable machines get "
            "GPUDirect-TCPX/TCPXO/RDMA on GKE or every EFA interface on EKS; see PoolFabric)."
        ),
    )
    node_repair: NodeRepair | None = Field(
        None,
        description=(
            "EKS only: node auto-repair thresholds. Omitted: repair on, at most 1 node repaired at a time on a "
            "capacity-block or reservation pool, EKS's defaults elsewhere."
        ),
    )
    root_volume: RootVolume | None = Field(
        None,
        description=(
            "EKS only: throughput and IOPS of the gp3 root volume. Omitted: 1000 MiB/s and 4000 IOPS, so multi-GB "
            "images pull fast (gp3's default is 125 MiB/s)."
        ),
    )
    pod_start: PodStart | None = Field(
        None,
        description=(
            "What makes a job's pod start fast on a new node: the images it runs, image streaming and a secondary boot "
            "disk (GKE), SOCI fast image pull (EKS), a pre-pull DaemonSet. Omitted: nothing changes on the nodes, and a "
            "cold node pulls every image in full."
        ),
    )
    ami_release_version: str | None = Field(
        None,
        description=(
            "EKS only: the EKS-optimized AMI release the node group runs (`release_version`, e.g. `1.35.2-20260304`), its "
            "Kubernetes minor matching `cluster.kubernetesVersion`. Omitted: EKS picks the latest release whenever the "
            "group is created or updated, so the fleet's AMI changes without a change here (a warning says so)."
        ),
    )
    zone_availability_override: ZoneAvailabilityOverride | None = Field(
        None,
        description=(
            "Declares zones where the catalog's sources did not see the machine type but you have capacity. Omitted: a "
            "zone the catalog knows does not offer the machine is an error, and a machine whose zones the catalog "
            "does not know (every EKS type: AWS publishes no per-zone table) is a warning."
        ),
    )


class StackSpec(SpecModel):
    KEEP_DIGITS = frozenset({"account_id"})  # 012345678901 written unquoted would lose its leading zero

    cloud: Cloud = Field(description="`gcp` (GKE) or `aws` (EKS).")
    region: str = Field(description="GCP region or AWS region, e.g. `us-central1`, `us-east-1`.")
    project: str | None = Field(None, description="GCP project ID (required on gcp).")
    account_id: str | None = Field(
        None,
        description=(
            "AWS account ID (12 digits). When set, the AWS provider refuses to deploy into any other account."
        ),
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description=("Labels (GCP) or tags (AWS) put on every cloud resource, e.g. `team: ml-platform`."),
    )
    cluster: ClusterSpec = Field(description="The Kubernetes cluster.")
    node_pools: list[NodePool] = Field(
        default_factory=list,
        description=("GPU node pools, at least one (a fleet manager may have none: it runs only the system pool)."),
    )
    scheduling: SchedulingSpec | None = Field(
        None,
        description=(
            "Queues, quotas, fair sharing, preemption, gang and topology-aware placement, rendered to Kueue + Kubeflow "
            "(`workload: kubeflow`) or to Slurm on Kubernetes (`workload: slurm`). Omitted: no scheduler is installed."
        ),
    )
    gpu_runtime: GpuRuntime = Field(
        default_factory=GpuRuntime,
        description=(
            "NVIDIA driver, device plugin or GPU Operator, GPU sharing, EFA device plugin; each pool may override "
            "`mode`, `driverVersion`, `sharing` and `efaDevicePlugin`."
        ),
    )
    fleet: Fleet | None = Field(
        None,
        description=(
            "This stack's part in a MultiKueue fleet across clusters and clouds: `manager` (queues, dispatch to the "
            "workers through StackReferences) or `worker` (runs the jobs). See docs/fleet.md. Omitted: a standalone "
            "cluster."
        ),
    )
    serving: ServingSpec | None = Field(
        None,
        description=(
            "Inference services with p99 latency SLOs beside training: checked before deploy (fits, SLO evidence, cold "
            "start, protection), rendered (vLLM Deployment or LeaderWorkerSet, KEDA, routing, a Kueue serving queue), "
            "priced and simulated. See docs/serving.md. Omitted: no serving."
        ),
    )


TOP_LEVEL_KEYS = [StackSpec.model_fields[name].alias or name for name in StackSpec.model_fields]
