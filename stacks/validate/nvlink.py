"""Pools on rack-scale NVLink machines (GB200 NVL72: GKE ``a4x-highgpu-4g``, EKS ``p6e-gb200.36xlarge``): reservation
block targeting and UltraServer types in the right place, whole racks, the Kubernetes version DRA ComputeDomains need.

``pool`` is the pool's scope, so each message names the pool.
"""

from __future__ import annotations


from catalog import CapacityType, Catalog, Cloud, MachineType
from catalog.cloud_limits import cloud_limit, sold_zones
from stacks.plan.reservation import is_capacity_block
from stacks.spec.scheduling import SchedulingSpec, Workload
from stacks.spec.cluster import ClusterSpec
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues
from stacks.validate.ultraserver_blocks import check_ultraserver_reservations

AL2023_ARM_NVIDIA_MIN_RELEASE = "20251103"
"""The EKS UltraServer guide: P6e-GB200 nodes need the AL2023 ARM NVIDIA AMI release v20251103 or later (driver 580,
CDMM; awsdocs/amazon-eks-user-guide@00e3293d ml-eks-nvidia-ultraserver.adoc, shared facts §2.4)."""
DRA_V1_MINOR = (1, 34)
"""A job gets its IMEX channel through a ``resource.k8s.io/v1`` ResourceClaim (the ComputeDomain controller's
template), served from Kubernetes 1.34 on; the NVIDIA DRA driver's prerequisites ask for v1.34.2+
(kubernetes-sigs/dra-driver-nvidia-gpu ``docs/prerequisites.md``; GKE DRA docs: 1.34+; shared facts
fleet-nvl72-podstart-research.md §2.1, §2.4)."""


def check_capacity_fields(pool: Issues, cat: Catalog, cloud: Cloud, spec: NodePool) -> None:
    """``reservationBlock`` (GKE specific reservations) and ``ultraserverType`` (EKS UltraServer machines) only where
    they mean something."""
    cap = spec.capacity
    if cap.reservation_block is not None:
        if cloud != Cloud.GCP:
            pool.error(
                ("capacity", "reservationBlock"),
                "reservationBlock is a GKE setting (block targeting of a specific reservation)",
                cap.reservation_block,
                fix="remove capacity.reservationBlock",
            )
        elif cap.type != CapacityType.RESERVATION:
            pool.error(
                ("capacity", "reservationBlock"),
                "a reservation block is targeted only by a reservation pool",
                cap.reservation_block,
                allowed="capacity.type: reservation",
                fix="set capacity.type: reservation and capacity.reservation, or remove reservationBlock",
            )
        elif "/" in cap.reservation_block or not cap.reservation_block.strip():
            pool.error(
                ("capacity", "reservationBlock"),
                "give the block's name, not a path",
                cap.reservation_block,
                allowed="the name in `gcloud beta compute reservations blocks list <reservation>`",
                fix="keep only the last part of …/reservationBlocks/<block>",
            )
    if cap.ultraserver_type is not None and not cat.ultraserver_types(cloud, spec.machine_type):
        pool.error(
            ("capacity", "ultraserverType"),
            f"{spec.machine_type} is not sold as an UltraServer",
            cap.ultraserver_type,
            allowed=", ".join(sorted({u.machine_type for u in cat.ultraservers.values()})),
            fix="remove capacity.ultraserverType",
        )


def check_rack_scale(
    pool: Issues, cat: Catalog, cloud: Cloud, cluster: ClusterSpec | None, spec: NodePool, machine: MachineType
) -> None:
    domain = cat.nvlink_domain(machine)
    if domain is None:
        if spec.racks is not None:
            pool.error(
                "racks",
                f"racks is for rack-scale NVLink machines (A4X); the NVLink domain of "
                f"{machine.machine_type} ends at the node",
                spec.racks,
                fix="remove racks",
            )
        return
    if not spec.multi_node:
        pool.warn(
            "multiNode",
            f"{machine.machine_type} nodes form {domain.domain_gpus}-GPU NVLink domains of "
            f"{domain.domain_nodes} nodes; a pool without multiNode gets no placement, fabric or "
            "ComputeDomain for jobs across nodes",
            False,
            fix="set multiNode: true",
        )
    nodes = _domain_nodes(cat, spec, domain.domain_nodes)
    if spec.max_nodes % nodes:
        pool.warn(
            "maxNodes",
            f"the pool does not fill whole NVLink domains ({nodes} nodes each): "
            f"{spec.max_nodes % nodes} node(s) of a partial rack, and jobs that need a whole domain cannot use "
            "them",
            spec.max_nodes,
            allowed=f"a multiple of {nodes}",
            fix=f"set maxNodes to {max(nodes, spec.max_nodes - spec.max_nodes % nodes)} or "
            f"{spec.max_nodes + nodes - spec.max_nodes % nodes}",
        )
    _check_racks(pool, cloud, spec, machine, domain.accelerator_topology)
    _check_sold_where(pool, cloud, spec, machine)
    _check_start_without_scale_from_zero(pool, cloud, spec, machine)
    check_ultraserver_reservations(pool, cat, cloud, spec)
    if cloud == Cloud.GCP and spec.capacity.placement_policy is not None:
        pool.error(
            ("capacity", "placementPolicy"),
            f"{machine.machine_type} pools get gpu-cluster's own workload "
            f"policy (HIGH_THROUGHPUT, accelerator topology {domain.accelerator_topology}) as their placement "
            "policy",
            spec.capacity.placement_policy,
            fix="remove capacity.placementPolicy (target the racks with capacity.reservationBlock)",
        )
    if cluster is not None:
        _check_version(pool, cloud, cluster, machine.machine_type)
    release = spec.ami_release_version
    if (
        cloud == Cloud.AWS
        and release
        and "-" in release
        and release.rsplit("-", 1)[1][:8] < AL2023_ARM_NVIDIA_MIN_RELEASE
    ):
        pool.error(
            "amiReleaseVersion",
            f"{machine.machine_type} needs the AL2023 ARM NVIDIA AMI from release "
            f"v{AL2023_ARM_NVIDIA_MIN_RELEASE} on (NVIDIA driver 580 with CDMM, the EKS UltraServer guide)",
            release,
            allowed=f"a release dated {AL2023_ARM_NVIDIA_MIN_RELEASE} or later, e.g. 1.35.2-20260304",
            fix="pin a newer release (`aws ssm get-parameter --name /aws/service/eks/optimized-ami/<k8s>/"
            "amazon-linux-2023/arm64/nvidia/recommended/release_version`), or remove amiReleaseVersion",
        )


def _check_start_without_scale_from_zero(pool: Issues, cloud: Cloud, spec: NodePool, machine: MachineType) -> None:
    """EKS: the pool's pods claim an IMEX channel (DRA), and the Cluster Autoscaler's AWS scale-from-zero template
    has no ResourceSlices, so a group at 0 nodes never grows. Its nodes must come up without the autoscaler: a
    capacity block's scheduled scale-up (which brings the block's nodes up for the window), or minNodes > 0."""
    if cloud != Cloud.AWS or not spec.multi_node or spec.min_nodes > 0:
        return
    window = spec.capacity.window
    if is_capacity_block(spec) and window is not None:
        return
    limit = cloud_limit("autoscaler-aws-scale-from-zero-dra")
    pool.error(
        "minNodes",
        f"{machine.machine_type} jobs claim an IMEX channel (DRA ComputeDomain), and the pool can "
        f"only start by scale-from-zero: {limit.cite()}",
        spec.min_nodes,
        allowed="a capacity block with its window (its scheduled scale-up brings the nodes up), or minNodes > 0",
        fix=f"declare capacity.window of the capacity block, or set minNodes: {spec.max_nodes}",
    )


def _check_sold_where(pool: Issues, cloud: Cloud, spec: NodePool, machine: MachineType) -> None:
    """A machine sold in named zones only (P6e-GB200: the Dallas Local Zone) never launches elsewhere."""
    limit = sold_zones(cloud.value, machine.machine_type)
    if limit is None:
        return
    sold = limit.value.split()
    for j, zone in enumerate(spec.zones):
        if zone not in sold:
            pool.error(
                ("zones", j),
                f"{machine.machine_type} is not sold in {zone}: {limit.cite()}",
                zone,
                allowed=", ".join(sold),
                fix=f"set zones: [{sold[0]}] and give its subnet in cluster.nodeSubnets.{sold[0]}",
            )


def _check_racks(pool: Issues, cloud: Cloud, spec: NodePool, machine: MachineType, topology: str) -> None:
    """GKE gives a pool under a ``1x72`` workload policy one sub-block (one rack): more nodes never come up. A pool
    of several racks is written as ``racks: N`` and becomes N GKE node pools of ``maxNodes / N`` nodes each."""
    placed = cloud == Cloud.GCP and bool(topology) and spec.multi_node
    if spec.racks is not None and not placed:
        pool.error(
            "racks",
            f"racks splits a GKE pool of rack-scale machines under a workload policy into one node "
            f"pool per rack; {machine.machine_type} on {cloud.value}"
            f"{'' if spec.multi_node else ' without multiNode'} gets no such policy",
            spec.racks,
            fix="remove racks" + ("" if spec.multi_node or cloud != Cloud.GCP else ", or set multiNode: true"),
        )
        return
    if not placed:
        return
    racks = spec.racks or 1
    # each rack node pool carries its share of the reserved nodes too (the cost policies sum the shares)
    counts: list[tuple[str | tuple[str, str], int]] = [("minNodes", spec.min_nodes), ("maxNodes", spec.max_nodes)]
    if spec.capacity.reserved_nodes:
        counts.append((("capacity", "reservedNodes"), spec.capacity.reserved_nodes))
    uneven = [(f, n) for f, n in counts if n % racks]
    for field, nodes in uneven:
        name = field if isinstance(field, str) else ".".join(field)
        pool.error(
            field,
            f"{name} is the total over the pool's {racks} racks and must split evenly between them",
            nodes,
            allowed=f"a multiple of {racks}",
            fix=f"set {name} to {nodes - nodes % racks or racks} or {nodes + racks - nodes % racks}",
        )
    if uneven:
        return
    limit = cloud_limit("gke-a4x-workload-policy-pool-nodes")
    per_rack, most = spec.max_nodes // racks, int(limit.value)
    if per_rack > most:
        needed = -(-spec.max_nodes // most)
        pool.error(
            "racks" if spec.racks else "maxNodes",
            f"{per_rack} nodes per GKE node pool under the {topology} workload policy: {limit.cite()}",
            spec.racks if spec.racks else spec.max_nodes,
            allowed=f"at most {most} nodes per rack",
            fix=f"set racks: {needed} (gpu-cluster creates one node pool per rack; minNodes/maxNodes stay totals)",
        )


def _domain_nodes(cat: Catalog, spec: NodePool, default: int) -> int:
    """Nodes of one NVLink domain for this pool: the UltraServer's instances on EKS, else the catalog's rack."""
    chosen = cat.ultraservers.get(spec.capacity.ultraserver_type or "")
    return chosen.instances if chosen is not None else default


def _check_version(pool: Issues, cloud: Cloud, cluster: ClusterSpec, machine_type: str) -> None:
    # lazy: rack-scale pools only need the GKE version grammar (the what-if/preview import floor)
    from catalog.gke_version import parse

    floor = ".".join(map(str, DRA_V1_MINOR))
    if cloud == Cloud.AWS:
        version = parse(cluster.kubernetes_version)
        if version is not None and version[0] < DRA_V1_MINOR:
            pool.error(
                "machineType",
                f"{machine_type} jobs get their IMEX channel through resource.k8s.io/v1 "
                f"claims (NVIDIA DRA driver ComputeDomains), which need Kubernetes {floor}+; the cluster runs "
                f"{cluster.kubernetes_version}",
                machine_type,
                allowed=f"cluster.kubernetesVersion ≥ {floor}",
                fix=f'set cluster.kubernetesVersion: "{floor}" or later',
            )
        return
    if cluster.min_master_version is None:
        pool.warn(
            "machineType",
            f"{machine_type} jobs need Kubernetes {floor}+ (DRA ComputeDomains, resource.k8s.io/v1); "
            "cluster.minMasterVersion is omitted, so the channel's default version is not checked",
            machine_type,
            allowed=f"cluster.minMasterVersion ≥ {floor}",
            fix='set cluster.minMasterVersion: "1.35"',
        )
        return
    version = parse(cluster.min_master_version) if cluster.min_master_version != "latest" else None
    if version is not None and version[0] < DRA_V1_MINOR:
        pool.error(
            "machineType",
            f"{machine_type} jobs need Kubernetes {floor}+ (DRA ComputeDomains, resource.k8s.io/v1)",
            cluster.min_master_version,
            allowed=f"cluster.minMasterVersion ≥ {floor}",
            fix='set cluster.minMasterVersion: "1.35" (cluster-toolkit\'s A4X blueprint pins 1.35)',
        )


def check_shared_cliques(
    issues: Issues, cat: Catalog, cloud: Cloud, pools: list[tuple[int, NodePool]], sched: SchedulingSpec
) -> None:
    """A Kubeflow stack gives each team namespace on a rack-scale pool its own ComputeDomain, and two domains' daemons
    can then share one NVLink clique, which upstream advises against: intermittent CUDA_ERROR_NOT_SUPPORTED with
    several domains in a clique (kubernetes-sigs/dra-driver-nvidia-gpu#892) and the churn bugs #1162/#1418/#1447.
    One namespace per rack pool keeps one domain per clique; more is warned, naming the namespaces."""
    if sched.workload != Workload.KUBEFLOW:
        return
    for i, pool in pools:
        machine = cat.machines.get((cloud, pool.machine_type))
        if machine is None or cat.nvlink_domain(machine) is None or not pool.multi_node:
            continue
        namespaces = list(
            dict.fromkeys(
                q.namespace or q.name for q in sched.queues if any(quota.pool == pool.name for quota in q.quotas)
            )
        )
        if len(namespaces) > 1:
            issues.pool(i, pool.name).warn(
                "multiNode",
                f"{len(namespaces)} ComputeDomains (one per team namespace: "
                f"{', '.join(namespaces)}) can put IMEX daemons of two domains in one NVLink clique, which upstream "
                "advises against (dra-driver-nvidia-gpu#892: intermittent CUDA_ERROR_NOT_SUPPORTED; churn bugs "
                "#1162, #1418, #1447)",
                namespaces,
                allowed="one team namespace per rack pool",
                fix="give each team its own rack pool, or keep the teams' jobs on separate racks (one job's own "
                "domain: `python -m preview job-objects`)",
            )
