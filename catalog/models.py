"""Typed records of the GPU catalog. Pure data: no Pulumi imports."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import Enum


class Cloud(str, Enum):
    GCP = "gcp"
    AWS = "aws"


class CapacityType(str, Enum):
    """How a pool buys its nodes. Reservations are billed at the on-demand rate here (no commitment discount);
    flex-start (GKE's Dynamic Workload Scheduler) has its own, lower price list."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVATION = "reservation"
    FLEX_START = "flex-start"


class PriceKind(str, Enum):
    """The price list a capacity type is charged from."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    FLEX_START = "flex-start"
    """GKE DWS flex-start ("DWS Defined Duration" Compute Engine SKUs): ``catalog/data/flex-start-prices.csv``."""


class GpuModel(str, Enum):
    A100_40GB = "A100_40GB"
    A100_80GB = "A100_80GB"
    H100_80GB = "H100_80GB"
    H200_141GB = "H200_141GB"
    B200 = "B200"
    GB200 = "GB200"
    """NVIDIA GB200 Grace Blackwell superchip GPUs (Grace arm64 host): GCP A4X, AWS P6e-GB200; NVL72 racks."""
    RTX_PRO_6000 = "RTX_PRO_6000"
    """NVIDIA RTX PRO 6000 Blackwell Server Edition, 96 GB (GCP G4, AWS G7e)."""
    L4 = "L4"
    L40S = "L40S"
    A10G = "A10G"
    T4 = "T4"
    V100_16GB = "V100_16GB"
    V100_32GB = "V100_32GB"

    @property
    def slurm_name(self) -> str:
        """Lower-case GRES type name, e.g. ``h100`` (Slurm ``gpu:<type>:<count>``)."""
        return self.value.replace("RTX_PRO_", "rtxpro").split("_")[0].lower()


class GpuDirect(str, Enum):
    NONE = "none"
    TCPX = "tcpx"
    TCPXO = "tcpxo"
    RDMA = "rdma"
    EFA_RDMA = "efa-rdma"


@dataclass(frozen=True)
class Price:
    usd_per_hour: float
    as_of: dt.date
    label: str
    """Short source for tables, e.g. 'AWS price list (Karpenter table)'."""
    source: str
    """Full provenance: repository @ commit, file, generation date."""


@dataclass(frozen=True)
class MachineType:
    """One GPU machine type (fixed GPUs) or an N1 host with attachable GPUs already chosen."""

    cloud: Cloud
    machine_type: str
    gpu_model: GpuModel
    accelerator: str
    """GKE accelerator type string (``nvidia-h100-80gb``) or the AWS short GPU name (``h100``)."""
    gpus: int
    gpu_memory_gib: int
    vcpu: int | None
    ram_gib: int | None
    nvlink_domain_gpus: int
    """GPUs that share one NVLink/NVSwitch domain on this machine (1 = PCIe only)."""
    efa_interfaces: int | None
    """Max EFA interfaces (AWS); None when no stored source confirms the count."""
    efa_confirmed: bool
    gpudirect: GpuDirect
    arch: str
    interconnect: str
    source: str
    attachable: bool = False
    """True for N1 hosts where the GPU is attached (count chosen by the pool)."""

    @property
    def gpu_memory_gib_per_gpu(self) -> int:
        return self.gpu_memory_gib // self.gpus if self.gpus else 0


@dataclass(frozen=True)
class AttachableGpu:
    cloud: Cloud
    accelerator: str
    gpu_model: GpuModel
    gpu_memory_gib: int
    allowed_counts: tuple[int, ...]
    host_machine_types: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class HostMachine:
    """A machine type without built-in GPUs: an N1 GPU host or a CPU system-pool type."""

    cloud: Cloud
    machine_type: str
    role: str
    vcpu: int
    ram_gib: int
    source: str


@dataclass(frozen=True)
class ZoneAvailability:
    """The zones where a source saw a machine type (or an N1-attachable GPU) offered."""

    machine_type: str
    zones: tuple[str, ...]
    as_of: dt.date
    source: str


class SoldAs(str, Enum):
    """How a machine type can be bought when not on demand or spot."""

    CAPACITY_BLOCK = "capacity-block"
    """Only as EC2 Capacity Blocks for ML (a reservation pool with ``reservationKind: capacity-block``)."""
    ULTRASERVER = "ultraserver"
    """Only as part of an EC2 UltraServer (bought as an UltraServer Capacity Block); no plain instances."""
    RESERVATION_BOUND = "reservation-bound"
    """GCP: only through (future) reservations in AI Hypercomputer; no on-demand, spot or flex-start VMs and no public
    list price (the pool's cost is unknown unless the policy pack's ``priceOverrides`` gives it)."""


@dataclass(frozen=True)
class SpecialOffering:
    """A GPU machine sold only in a special form: the plain form (on-demand, spot, ODCR) does not exist."""

    cloud: Cloud
    machine_type: str
    sold_as: SoldAs
    gpus: int
    fabric: str
    source: str


@dataclass(frozen=True)
class ControlPlaneFee:
    usd_per_hour: float
    as_of: dt.date
    label: str
    source: str
    support: str = "standard"
    """``standard``, or ``extended`` for an EKS version past its end of standard support."""


@dataclass(frozen=True)
class EksVersion:
    """One row of the EKS Kubernetes release calendar (UTC dates)."""

    version: str
    end_of_standard_support: dt.date
    """Extended-support billing starts at 00:00 UTC on this day (EKS release calendar)."""
    end_of_extended_support: dt.date
    as_of: dt.date
    source: str

    def extended_on(self, day: dt.date) -> bool:
        """Past standard support on ``day``: the control plane bills at the extended-support rate."""
        return day >= self.end_of_standard_support


@dataclass(frozen=True)
class NvlinkDomain:
    """A rack-scale NVLink domain (GB200 NVL72): GPUs of several nodes on one NVLink fabric, sharing IMEX channels
    through an NVIDIA DRA driver ComputeDomain. ``nvlink-domains.csv``."""

    cloud: Cloud
    machine_type: str
    domain_gpus: int
    domain_nodes: int
    """Nodes per domain (72 GPUs / 4 per node = 18): the Slurm ``topology/block`` block size and the rack."""
    accelerator_topology: str
    """GKE workload policy ``accelerator_topology`` (``1x72``); empty on AWS (the UltraServer is the domain)."""
    domain_label: str
    """The node label whose value is the same on every node of one domain: GKE's ``gce-topology-subblock``, or
    GPU Feature Discovery's ``nvidia.com/gpu.clique`` (EKS)."""
    block_label: str
    """The label of the level above the domain (GKE ``gce-topology-block``); empty when there is none."""
    source: str


@dataclass(frozen=True)
class UltraServer:
    """An EC2 UltraServer type: a fixed number of instances on one NVLink domain, bought as a Capacity Block."""

    cloud: Cloud
    ultraserver_type: str
    machine_type: str
    instances: int
    gpus: int
    source: str


@dataclass(frozen=True)
class CapacityBlockRate:
    """A reference capacity-block rate (no list price exists: blocks are quoted per purchase). Used to estimate a
    block's fee in messages and to compare a declared fee with; never as the block's price."""

    cloud: Cloud
    machine_type: str
    region: str
    usd_per_gpu_hour: float
    as_of: dt.date
    label: str
    source: str
