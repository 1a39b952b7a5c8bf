"""Derived fabric facts of a pool: which fabric it gets, its networks as Kubernetes and the cloud name them, the NICs
and NCCL transport a job uses, its nominal bandwidth. Computed once (``PoolFacts.fabric``); components, renderers,
the preview and the policies' inputs read it and never recompute it. Pure: no Pulumi."""

from __future__ import annotations

from dataclasses import dataclass

from catalog import Cloud
from catalog.fabric import FabricCatalog, FabricKind, MachineFabric
from stacks.spec.fabric import FabricMode, PoolFabric

TCPX_NETWORK_PREFIX = "vpc"
"""GKE's GPUDirect-TCPX/TCPXO guides name the Network objects vpc1…vpcN (cluster-toolkit gvnic_prefix, from 1)."""
GPU_TCP_SYSCTLS = {"net.ipv4.tcp_rmem": "4096 87380 16777216", "net.ipv4.tcp_wmem": "4096 16384 16777216"}
"""TCP buffer sizes (min, default, max bytes) cluster-toolkit's gke-node-pool module sets through
``linux_node_config.sysctls`` on its GPU node pools (GoogleCloudPlatform/cluster-toolkit@8d90523a and @01a7a3ed
modules/compute/gke-node-pool/main.tf). It sets no ``net.core.rmem_max``/``wmem_max``; neither does gpu-cluster."""
RDMA_GVNIC_NETWORK = "gvnic-1"
RDMA_NETWORK_PREFIX = "rdma-"
"""GKE's A3 Ultra/A4 guides: gvnic-1 for the extra gVNIC, rdma-0…rdma-7 for the RoCE subnets."""
GVNIC_RANGE = "192.168.{third}.0/20"
"""gVNIC subnet i (1-based) of TCPX/TCPXO: 192.168.(16·(i-1)).0/20, inside cluster-toolkit's 192.168.0.0/16."""
RDMA_GVNIC_RANGE = "192.168.64.0/18"
RDMA_SUBNET_RANGE = "192.168.{third}.0/21"
"""RDMA subnet j: 192.168.(128 + 8·j).0/21, the 192.168.128.0/18 block split in 8 (cluster-toolkit A3 Ultra / A4)."""

EFA_NODE_HUGEPAGES = {"hugepages-2Mi": "10256Mi"}
"""What an EFA node advertises: the 5,128 pre-allocated 2-MiB pages of the Amazon EKS user guide "Run machine
learning training on Amazon EKS with Elastic Fabric Adapter" (jobs request 5120Mi: ``render/fabric_pod.py``). The node template of an
autoscaled EFA group declares it, or Cluster Autoscaler never scales the group up from zero for a pod requesting huge
pages (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/aws_manager.go builds a template node's allocatable
from the instance type plus the ``k8s.io/cluster-autoscaler/node-template/resources/<name>`` tags only)."""


@dataclass(frozen=True)
class FabricNetworkPlan:
    k8s_name: str
    """Name of the ``Network`` / ``GKENetworkParamSet`` pair pods reference (``vpc1``, ``rdma-0``)."""
    interface: str
    """Pod interface the network appears as (``eth1`` …)."""
    device_mode: str
    """``NetDevice`` (gVNIC) or ``RDMA`` (RoCE), the GKENetworkParamSet ``deviceMode``."""
    network: str | None = None
    """The existing VPC network (mode ``existing``); None: gpu-cluster creates it."""
    subnetwork: str | None = None
    cidr: str | None = None
    """The subnet range of a network gpu-cluster creates (mode ``auto``); None where the network is given or GKE's."""


@dataclass(frozen=True)
class FabricPlan:
    kind: FabricKind
    machine: MachineFabric
    mode: FabricMode
    networks: tuple[FabricNetworkPlan, ...] = ()
    """Extra networks in NIC order (GKE); empty on EKS (EFA interfaces ride the pool's own subnets)."""
    shm_gib: int | None = None
    """``fabric.sharedMemoryGiB``: the /dev/shm size of the pool's jobs; None: sized from the machine's RAM."""
    runtime_image: str | None = None
    """``fabric.runtimeImage``: the ``torch-<pool>`` runtime's image; None: the fabric's default."""
    runtime_image_build: str | None = None
    """``fabric.runtimeImageBuild``: the recipe (``catalog/data/image-builds.csv``) ``runtime_image`` was built from."""

    @property
    def creates_networks(self) -> bool:
        return self.mode == FabricMode.AUTO and bool(self.networks)

    @property
    def managed(self) -> bool:
        """GKE creates and attaches the networks (``acceleratorNetworkProfile``); gpu-cluster attaches none."""
        return self.mode == FabricMode.MANAGED

    @property
    def gpu_nics(self) -> int:
        """NICs per node that carry GPU traffic (GPU NICs on GKE, EFA interfaces on EKS)."""
        return self.machine.gpu_nics

    @property
    def gvnic(self) -> tuple[FabricNetworkPlan, ...]:
        return tuple(n for n in self.networks if n.device_mode == "NetDevice")

    @property
    def rdma(self) -> tuple[FabricNetworkPlan, ...]:
        return tuple(n for n in self.networks if n.device_mode == "RDMA")


def network_layout(machine: MachineFabric) -> list[tuple[str, str]]:
    """``(k8s name, deviceMode)`` of each extra network in NIC order, as GKE's guides name them."""
    if machine.kind == FabricKind.RDMA:
        gvnic = (
            [RDMA_GVNIC_NETWORK]
            if machine.gvnic_networks == 1
            else [f"gvnic-{i}" for i in range(1, machine.gvnic_networks + 1)]
        )
        return [(n, "NetDevice") for n in gvnic] + [
            (f"{RDMA_NETWORK_PREFIX}{i}", "RDMA") for i in range(machine.rdma_networks)
        ]
    return [(f"{TCPX_NETWORK_PREFIX}{i}", "NetDevice") for i in range(1, machine.gvnic_networks + 1)]


def _cidr(kind: FabricKind, device_mode: str, nth: int) -> str:
    if device_mode == "RDMA":
        return RDMA_SUBNET_RANGE.format(third=128 + 8 * nth)
    return RDMA_GVNIC_RANGE if kind == FabricKind.RDMA else GVNIC_RANGE.format(third=16 * nth)


def fabric_mode(setting: PoolFabric | None) -> FabricMode:
    return setting.mode if setting is not None else FabricMode.AUTO


def fabric_plan(
    cloud: Cloud, machine_type: str, multi_node: bool, setting: PoolFabric | None, fabrics: FabricCatalog
) -> FabricPlan | None:
    """The pool's fabric, or None: no fabric on this machine, ``off``, or ``auto`` on a single-node pool."""
    machine = fabrics.for_machine(cloud, machine_type)
    mode = fabric_mode(setting)
    if machine is None or mode == FabricMode.OFF or (mode == FabricMode.AUTO and not multi_node):
        return None
    given = setting.networks if setting is not None and mode == FabricMode.EXISTING else []
    networks = []
    attached = cloud == Cloud.GCP and mode != FabricMode.MANAGED  # managed: GKE names and attaches them
    counts = {"NetDevice": 0, "RDMA": 0}  # the i-th gVNIC / j-th RDMA network: its subnet range when created
    for i, (name, device_mode) in enumerate(network_layout(machine) if attached else []):
        own = given[i] if i < len(given) else None
        nth = counts[device_mode]
        counts[device_mode] += 1
        networks.append(
            FabricNetworkPlan(
                k8s_name=name,
                interface=f"eth{i + 1}",
                device_mode=device_mode,
                network=own.network if own else None,
                subnetwork=own.subnetwork if own else None,
                cidr=_cidr(machine.kind, device_mode, nth) if mode == FabricMode.AUTO else None,
            )
        )
    return FabricPlan(
        kind=machine.kind,
        machine=machine,
        mode=mode,
        networks=tuple(networks),
        shm_gib=setting.shared_memory_gib if setting is not None else None,
        runtime_image=setting.runtime_image if setting is not None else None,
        runtime_image_build=setting.runtime_image_build.value
        if setting is not None and setting.runtime_image_build is not None
        else None,
    )
