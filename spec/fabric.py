"""The per-pool fabric setting (``nodePools[].fabric``): how a multi-node pool gets its GPU network.

Shape only lives here. Rules that need the catalog (which machines have a fabric, how many networks it needs) live
in ``validation/fabric.py``; the derived plan in ``plan/fabric.py``.
"""
from __future__ import annotations

from enum import Enum

from pydantic import Field

from spec.model_base import SpecModel


class FabricMode(str, Enum):
    AUTO = "auto"
    """Multi-node pools on a fabric-capable machine get their fabric, created by gpu-cluster; other pools don't."""
    OFF = "off"
    """No fabric: NCCL between nodes runs over the primary NIC (a warning names the bandwidth given up)."""
    EXISTING = "existing"
    """GKE: the pool attaches networks you created (``networks``); gpu-cluster creates the rest of the fabric."""
    MANAGED = "managed"
    """GKE, RDMA machines: GKE creates and attaches the networks itself (node pool ``acceleratorNetworkProfile:
    auto``, managed DRANET, GKE ≥ 1.34.1-gke.1829001); gpu-cluster creates no networks and no Network objects, and
    its jobs claim the NICs through a DRA ResourceClaimTemplate (``render/fabric_claim.py``)."""


class FabricNetwork(SpecModel):
    network: str = Field(description="Name of an existing VPC network in the stack's project.")
    subnetwork: str = Field(description="Name of its subnetwork in the pool's region.")


class PoolFabric(SpecModel):
    mode: FabricMode = Field(FabricMode.AUTO, description=(
        "`auto` (default): a multi-node pool on a fabric-capable machine gets its fabric (GKE: GPUDirect-TCPX on "
        "A3 High, -TCPXO on A3 Mega, RDMA on A3 Ultra/A4, with the extra VPCs, multi-networking, NCCL plugin; EKS: "
        "every EFA interface), and its runtimes/NodeSets use it; single-node pools get none. `off`: no fabric (a "
        "warning names the bandwidth lost; the policy pack reports it). `existing`: GKE, attach your own networks. "
        "`managed`: GKE on A3 Ultra/A4 (RDMA), GKE creates and attaches the networks (`acceleratorNetworkProfile: "
        "auto`, GKE ≥ 1.34.1-gke.1829001, no other pool of the cluster on networks gpu-cluster attaches); jobs get "
        "every RDMA NIC through a DRA claim (ResourceClaimTemplate `rdma-<pool>`, DeviceClass `mrdma.google.com`) "
        "that the `torch-<pool>` runtime and the Slinky NodeSet reference; Kueue counts the NICs as quota "
        "(`gpu-cluster/rdma-nics`)."))
    networks: list[FabricNetwork] = Field(default_factory=list, description=(
        "`existing` only: the networks in NIC order. TCPX: 4, TCPXO: 8 gVNIC networks, each its own VPC; RDMA: 9, "
        "one gVNIC network then the 8 subnets of one RoCE VPC (created with the zone's `-vpc-roce` profile)."))
