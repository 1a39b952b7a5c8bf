"""The typed stack spec: what a user writes under ``gpu-cluster:*`` in ``Pulumi.<stack>.yaml``.

Shape only lives here (types, ranges, defaults). Rules that need the catalog or several fields at once live
in the ``stacks/validate/`` package; every check reports through its ``Issues`` collector (``stacks/validate/issues.py``).
"""
from __future__ import annotations

from enum import Enum

from pydantic import Field

from catalog import CapacityType, Cloud
from stacks.spec.capacity import CapacityWindow
from stacks.spec.eks_node import NodeRepair, RootVolume
from stacks.spec.fabric import PoolFabric
from stacks.spec.fleet import Fleet
from stacks.spec.maintenance import Maintenance
from stacks.spec.gpu_runtime import GpuRuntime, PoolGpuRuntime
from stacks.spec.pod_start import ImageMirror, PodStart
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
        return {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE",
                "NoExecute": "NO_EXECUTE"}[self.value]


class ClusterMode(str, Enum):
    CREATE = "create"
    EXISTING = "existing"


class ReleaseChannel(str, Enum):
    RAPID = "RAPID"
    REGULAR = "REGULAR"
    STABLE = "STABLE"


class AwsReservationKind(str, Enum):
    CAPACITY_RESERVATION = "capacity-reservation"
    CAPACITY_BLOCK = "capacity-block"


class Taint(SpecModel):
    TEXT_FROM_BOOL = frozenset({"value"})  # `pulumi config set --path …taints[0].value true` writes a boolean

    key: str = Field(description="Taint key, e.g. `dedicated`.")
    value: str = Field("", description="Taint value (may be empty).")
    effect: TaintEffect = Field(description="`NoSchedule`, `PreferNoSchedule` or `NoExecute`.")


class Capacity(SpecModel):
    type: CapacityType = Field(CapacityType.ON_DEMAND, description=(
        "`on-demand` (default), `spot`, `reservation`, or `flex-start` (GKE only: Dynamic Workload Scheduler "
        "capacity at DWS prices, nodes created for pending work from 0 and deleted after maxRunHours)."))
    reservation: str | None = Field(None, description=(
        "Required for `reservation`: the GKE specific reservation name, or the EC2 capacity reservation / "
        "capacity block ID (`cr-…`)."))
    reservation_project: str | None = Field(None, description=(
        "GKE only: project that owns a shared reservation. Omitted: the stack's project."))
    reservation_kind: AwsReservationKind | None = Field(None, description=(
        "EKS only: `capacity-reservation` (ODCR, default) or `capacity-block` (EC2 Capacity Blocks for ML)."))
    reservation_block: str | None = Field(None, description=(
        "GKE specific reservation only: the reservation block the pool's nodes come from (block targeting: the "
        "node pool consumes `<reservation>/reservationBlocks/<block>`, so every node lands in that block, e.g. the "
        "racks of one A4X reservation block). Omitted: any block of the reservation."))
    ultraserver_type: str | None = Field(None, description=(
        "EKS capacity blocks of UltraServer-only machines (`p6e-gb200.36xlarge`): the UltraServer type the block "
        "reserves, `u-p6e-gb200x72` (18 instances, one 72-GPU NVLink domain) or `u-p6e-gb200x36` (9 instances). "
        "reservedNodes must be whole UltraServers. Required for those machines."))
    placement_group: str | None = Field(None, description=(
        "EKS ODCR only: the existing cluster placement group the capacity reservation was created in (its "
        "instances can only launch there). Omitted: no placement group; reservation pools never get a new one."))
    reserved_nodes: int | None = Field(None, ge=1, description=(
        "Reservation pools: how many nodes the reservation (or capacity block) holds. They are billed whether nodes "
        "run or not, so `$/h min` counts them. Omitted: maxNodes."))
    window: CapacityWindow | None = Field(None, description=(
        "EKS capacity blocks: the window the block was bought for. The node group is scaled up at its start and "
        "to 0 thirty minutes before its end by Auto Scaling scheduled actions. Omitted: no schedule (the group "
        "stays at 0 until pods ask the Cluster Autoscaler for nodes)."))
    upfront_fee_usd: float | None = Field(None, gt=0, allow_inf_nan=False, description=(
        "EKS capacity blocks: the upfront fee paid for the block, in USD (the offering's `UpfrontFee`). The cost "
        "table spreads it over the window. Omitted: the pool's cost is unknown and the budget policy fails closed."))
    roll_nodes: bool = Field(False, description=(
        "EKS capacity blocks: let this `pulumi up` roll launch-template and AMI changes into the node group. EKS "
        "upgrades a capacity-block node group only at size 0, so by default (false) such changes are recorded in "
        "the launch template but not rolled; set true for one `pulumi up` while the group is at size 0 (outside "
        "its window), then back to false."))
    placement_policy: str | None = Field(None, description=(
        "GKE specific reservation of a multi-node pool only: the compact placement policy (Compute Engine resource "
        "policy, same project and region) the reservation was created with. The pool's compact placement then names "
        "it (`placement_policy {type: COMPACT, policy_name}`) instead of asking GKE for a new placement group, "
        "which a reservation with its own placement policy cannot serve. Omitted: plain COMPACT."))
    max_run_hours: int | None = Field(None, ge=1, description=(
        "GKE flex-start only: hours a node may run before GKE deletes it (node pool maxRunDuration; GKE allows at "
        "most 168, seven days). Omitted: 168."))
    queued_provisioning: bool | None = Field(None, description=(
        "Nodes come only for workloads Kueue admitted, all of a gang's nodes at once or none: Kueue creates a "
        "ProvisioningRequest per workload through a ProvisioningRequest AdmissionCheck on the queues with quota here "
        "(GKE: queued provisioning on flex-start pools, class `queued-provisioning.gke.io`; EKS: the Cluster "
        "Autoscaler's `best-effort-atomic-scale-up.autoscaling.x-k8s.io`). Lets topology-aware placement use the "
        "autoscaled pool. Needs minNodes 0 and `workload: kubeflow`. Omitted: true on flex-start pools, else false."))
    reservation_group: str | None = Field(None, description=(
        "EKS capacity blocks of more than one UltraServer: the ARN of the Capacity Reservation Resource Group that "
        "holds the blocks (each UltraServer block is its own reservation); the launch template targets the group "
        "instead of one `reservation` ID, which may then be omitted. Required when reservedNodes spans several "
        "UltraServers."))

class UpgradeSettings(SpecModel):
    max_surge: int = Field(0, ge=0, description=(
        "Extra nodes created during an upgrade. Default 0: GPUs are scarce, so a surge node may never come."))
    max_unavailable: int = Field(1, ge=0, description="Nodes upgraded at once. Default 1. Both 0 is refused.")


class Accelerator(SpecModel):
    type: str = Field(description="GKE accelerator type, e.g. `nvidia-tesla-t4` (only N1 hosts need it).")
    count: int | None = Field(None, description=(
        "GPUs per node. Fixed-GPU machine types (A2/A3/A4/G2) must match the catalog count, or omit it."))


class ZoneAvailabilityOverride(SpecModel):
    zones: list[str] = Field(min_length=1, description=(
        "Zones of this pool where you know the machine type is offered to you (a reservation, an allow-listed "
        "project, capacity the catalog's sources did not see). Each must be one of the pool's `zones`."))
    reason: str = Field(min_length=1, description=(
        "Why you know: e.g. the reservation or support case. Shown with the warning that replaces the error."))


class NodePool(SpecModel):
    name: str = Field(description=(
        "Pool name: lower-case letters, digits and `-`, at most 32 characters. Becomes the "
        f"`{POOL_LABEL_KEY}` node label and the prefix of the cloud's node pool name."))
    machine_type: str = Field(description="GPU machine type from the catalog, e.g. `a3-megagpu-8g`, `p5.48xlarge`.")
    accelerator: Accelerator | None = Field(None, description=(
        "GKE N1 hosts only: the attached GPU type and count. Other types take it from the catalog."))
    zones: list[str] = Field(min_length=1, description=(
        "Zones (GKE) or Availability Zones (EKS) for the nodes. Multi-node pools need exactly one."))
    min_nodes: int = Field(0, ge=0, description="Autoscaler minimum, total over the zones. Default 0 (scale to zero).")
    max_nodes: int = Field(ge=1, description="Autoscaler maximum, total over the zones. Cost at max uses it.")
    capacity: Capacity = Field(default_factory=Capacity, description="How nodes are bought.")
    multi_node: bool = Field(False, description=(
        "The pool runs jobs spanning nodes: GKE compact placement in one zone; EKS cluster placement group in "
        "one AZ with every EFA interface the instance type has. Omitted: true on a pool of one zone of an "
        "HGX-class machine (8+ GPUs with a GPUDirect/EFA fabric, GPUs not shared) that can reach 4 nodes, since "
        "such a pool is bought for jobs spanning nodes; else false. Write false for a pool of single-node jobs."))
    racks: int | None = Field(None, ge=1, le=64, description=(
        "GKE rack-scale machines (A4X, GB200 NVL72) only: how many racks the pool spans. gpu-cluster creates one GKE "
        "node pool per rack (each one sub-block of at most 18 nodes under the `1x72` workload policy); "
        "`minNodes`/`maxNodes` stay totals over the racks and split evenly. Omitted: 1."))
    labels: dict[str, str] = Field(default_factory=dict, description="Extra Kubernetes node labels.")
    taints: list[Taint] = Field(default_factory=list, description=(
        "Extra taints. Every GPU pool already carries `nvidia.com/gpu=present:NoSchedule`."))
    disk_size_gib: int = Field(200, ge=50, le=65536, description="Boot disk size per node in GiB. Default 200.")
    upgrade: UpgradeSettings = Field(default_factory=UpgradeSettings, description="Surge upgrade settings.")
    gpu_runtime: PoolGpuRuntime | None = Field(None, description=(
        "Overrides of the stack's `gpuRuntime` for this pool (mode, driver version, sharing, EFA plugin)."))
    local_ssd_ephemeral_storage: bool | None = Field(None, description=(
        "Back the node's ephemeral storage (images, emptyDir, scratch) with the machine's local disks: GKE local SSDs "
        "(a3-highgpu-8g, a3-megagpu-8g: 16 x 375 GiB), EKS NVMe instance store assembled as RAID0 by nodeadm (p4d, "
        "p5, p5e, p5en, p6-b200). Omitted: on where the machine has them. On GKE changing it replaces the node pool "
        "(on EKS it rolls the nodes); set false to keep a pool created before this setting existed."))
    fabric: PoolFabric | None = Field(None, description=(
        "The GPU network between nodes. Omitted: `mode: auto` (multi-node pools on fabric-capable machines get "
        "GPUDirect-TCPX/TCPXO/RDMA on GKE or every EFA interface on EKS; see PoolFabric)."))
    node_repair: NodeRepair | None = Field(None, description=(
        "EKS only: node auto-repair thresholds. Omitted: repair on, at most 1 node repaired at a time on a "
        "capacity-block or reservation pool, EKS's defaults elsewhere."))
    root_volume: RootVolume | None = Field(None, description=(
        "EKS only: throughput and IOPS of the gp3 root volume. Omitted: 1000 MiB/s and 4000 IOPS, so multi-GB "
        "images pull fast (gp3's default is 125 MiB/s)."))
    pod_start: PodStart | None = Field(None, description=(
        "What makes a job's pod start fast on a new node: the images it runs, image streaming and a secondary boot "
        "disk (GKE), SOCI fast image pull (EKS), a pre-pull DaemonSet. Omitted: nothing changes on the nodes, and a "
        "cold node pulls every image in full."))
    ami_release_version: str | None = Field(None, description=(
        "EKS only: the EKS-optimized AMI release the node group runs (`release_version`, e.g. `1.35.2-20260304`), its "
        "Kubernetes minor matching `cluster.kubernetesVersion`. Omitted: EKS picks the latest release whenever the "
        "group is created or updated, so the fleet's AMI changes without a change here (a warning says so)."))
    zone_availability_override: ZoneAvailabilityOverride | None = Field(None, description=(
        "Declares zones where the catalog's sources did not see the machine type but you have capacity. Omitted: a "
        "zone the catalog knows does not offer the machine is an error, and a machine whose zones the catalog "
        "does not know (every EKS type: AWS publishes no per-zone table) is a warning."))


DEFAULT_SYSTEM_MACHINE = {Cloud.GCP: "e2-standard-4", Cloud.AWS: "m6i.xlarge"}
"""CPU node type of the system pool when ``cluster.systemPool.machineType`` is omitted."""


class SystemPool(SpecModel):
    machine_type: str | None = Field(None, description=(
        "CPU node type for cluster add-ons. Omitted: `e2-standard-4` (GKE) or `m6i.xlarge` (EKS), priced in every "
        "catalog region. Another type needs a catalog price in the region (the cost total always includes it)."))

    def machine_type_for(self, cloud: Cloud) -> str:
        return self.machine_type or DEFAULT_SYSTEM_MACHINE[cloud]
    min_nodes: int = Field(1, ge=1, description="Default 1.")
    max_nodes: int = Field(3, ge=1, description="Default 3.")


class ClusterSpec(SpecModel):
    name: str = Field(description="Cluster name (GKE: ≤ 40 chars; EKS: ≤ 100), lower-case letters, digits, `-`.")
    mode: ClusterMode = Field(ClusterMode.CREATE, description=(
        "`create` (default): a new cluster with secure defaults. `existing`: add pools to a cluster by name."))
    location: str | None = Field(None, description=(
        "GKE only: the cluster's location for `existing` clusters (a region or zone). Omitted: the stack region."))
    release_channel: ReleaseChannel = Field(ReleaseChannel.REGULAR, description="GKE release channel. Default REGULAR.")
    min_master_version: str | None = Field(None, description=(
        "GKE only, created clusters: the minimum control-plane version (`min_master_version`: `1.33`, `1.33.5` or "
        "`1.33.5-gke.1080000`, or `latest`), within the release channel. Omitted: the channel's default version, "
        "which gpu-cluster cannot check against the GPU fabric's version floor (the preview says so). Set: a version "
        "below the floor of a fabric pool's fabric is refused."))
    kubernetes_version: str = Field("1.35", description=(
        "EKS Kubernetes version. Default 1.35 (1.34 reached end of standard support on 2026-12-02; versions past "
        "it bill the extended-support fee)."))
    network: str | None = Field(None, description="GKE VPC network name. Omitted: `default`. Any other network "
                                "(custom mode) needs `subnetwork` as well.")
    subnetwork: str | None = Field(None, description="GKE subnetwork name. Required with a `network` other than "
                                   "`default` (GKE picks a subnetwork only on the auto-mode `default` network). "
                                   "Omitted: the default network's subnetwork in the region.")
    subnets: dict[str, str] = Field(default_factory=dict, description=(
        "EKS: private subnet ID per Availability Zone, e.g. `{us-east-1a: subnet-0abc…}`. Pools use the subnets "
        "of their zones; a new cluster needs at least two zones. Every entry also goes to the control plane, so no "
        "Local Zone subnet here (use `nodeSubnets`)."))
    node_subnets: dict[str, str] = Field(default_factory=dict, description=(
        "EKS: subnets for GPU node groups only, by zone, e.g. a Local Zone `{us-east-1-dfw-2a: subnet-0abc…}` "
        "(P6e-GB200 Capacity Blocks are sold only there). The control plane never gets them (it runs only in the "
        "Region's Availability Zones). A pool's zone takes its subnet from here first, then from `subnets`."))
    authorized_networks: list[str] = Field(default_factory=list, description=(
        "CIDRs allowed to reach the Kubernetes API. Empty (default): private endpoint only. Never 0.0.0.0/0."))
    deletion_protection: bool = Field(True, description=(
        "Protect the cluster from deletion (GKE `deletion_protection` and Pulumi `protect`). Default true."))
    cloud_nat: bool | None = Field(None, description=(
        "GKE only: create a Cloud Router + NAT so private nodes can pull images from outside Google (nvcr.io, "
        "ghcr.io, registry.k8s.io). Omitted: created when `network` is omitted (the default network), not when you "
        "bring your own network (it usually has its NAT already)."))
    system_pool: SystemPool = Field(default_factory=SystemPool, description=(
        "Untainted CPU pool for cluster add-ons (GPU pools are tainted, so add-ons cannot run there)."))
    maintenance: Maintenance | None = Field(None, description=(
        "GKE only: when GKE may upgrade (window) and when not (exclusions). Omitted: a weekend window on clusters "
        "with a multi-node or reservation pool, GKE's default elsewhere."))
    cluster_autoscaler: bool = Field(True, description=(
        "EKS only: install the Kubernetes Cluster Autoscaler (kube-system, on the system pool, EKS Pod Identity) so "
        "node groups scale between minNodes and maxNodes, from zero too. Default true. Set false only when an "
        "`existing` cluster already runs one (or Karpenter); GKE scales pools itself."))
    admin_principal_arns: list[str] = Field(default_factory=list, description=(
        "EKS only, created clusters: IAM role or user ARNs (`arn:aws:iam::<account>:role/<name>`) that get cluster "
        "admin through an EKS access entry (AmazonEKSClusterAdminPolicy, cluster scope), e.g. your SSO admin role "
        "and the CI role; list the identity that runs `pulumi up` too, or the run cannot install the add-ons. Nobody "
        "else is admin: the cluster is created with `bootstrapClusterCreatorAdminPermissions: false`. Empty "
        "(default): one entry for the IAM role (or user) running `pulumi up`, read from its session."))
    image_mirrors: list[ImageMirror] = Field(default_factory=list, description=(
        "GKE only: Artifact Registry remote repositories (in the stack's project and region) that mirror nvcr.io or "
        "ghcr.io, so GPU images come from Artifact Registry, stay in the region and can be streamed. Empty "
        "(default): none."))


class StackSpec(SpecModel):
    KEEP_DIGITS = frozenset({"account_id"})  # 012345678901 written unquoted would lose its leading zero

    cloud: Cloud = Field(description="`gcp` (GKE) or `aws` (EKS).")
    region: str = Field(description="GCP region or AWS region, e.g. `us-central1`, `us-east-1`.")
    project: str | None = Field(None, description="GCP project ID (required on gcp).")
    account_id: str | None = Field(None, description=(
        "AWS account ID (12 digits). When set, the AWS provider refuses to deploy into any other account."))
    labels: dict[str, str] = Field(default_factory=dict, description=(
        "Labels (GCP) or tags (AWS) put on every cloud resource, e.g. `team: ml-platform`."))
    cluster: ClusterSpec = Field(description="The Kubernetes cluster.")
    node_pools: list[NodePool] = Field(default_factory=list, description=(
        "GPU node pools, at least one (a fleet manager may have none: it runs only the system pool)."))
    scheduling: SchedulingSpec | None = Field(None, description=(
        "Queues, quotas, fair sharing, preemption, gang and topology-aware placement, rendered to Kueue + Kubeflow "
        "(`workload: kubeflow`) or to Slurm on Kubernetes (`workload: slurm`). Omitted: no scheduler is installed."))
    gpu_runtime: GpuRuntime = Field(default_factory=GpuRuntime, description=(
        "NVIDIA driver, device plugin or GPU Operator, GPU sharing, EFA device plugin; each pool may override "
        "`mode`, `driverVersion`, `sharing` and `efaDevicePlugin`."))
    fleet: Fleet | None = Field(None, description=(
        "This stack's part in a MultiKueue fleet across clusters and clouds: `manager` (queues, dispatch to the "
        "workers through StackReferences) or `worker` (runs the jobs). See docs/fleet.md. Omitted: a standalone "
        "cluster."))
    serving: ServingSpec | None = Field(None, description=(
        "Inference services with p99 latency SLOs beside training: checked before deploy (fits, SLO evidence, cold "
        "start, protection), rendered (vLLM Deployment or LeaderWorkerSet, KEDA, routing, a Kueue serving queue), "
        "priced and simulated. See docs/serving.md. Omitted: no serving."))


TOP_LEVEL_KEYS = [StackSpec.model_fields[name].alias or name for name in StackSpec.model_fields]
