"""The per-pool fabric setting (``nodePools[].fabric``): how a multi-node pool gets its GPU network.

Shape only lives here. Rules that need the catalog (which machines have a fabric, how many networks it needs) live
in ``stacks/validate/fabric.py``; the derived plan in ``stacks/plan/fabric.py``.
"""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from stacks.spec.model_base import SpecModel


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


class ImageBuild(str, Enum):
    """A job-image recipe shipped in this repository (``images/<name>/Dockerfile``, ``catalog/data/image-builds.csv``)."""

    SLURMD_EFA = "slurmd-efa"
    """Slinky's slurmd + the EFA installer (libfabric's EFA provider, aws-ofi-nccl), linux/amd64 and linux/arm64."""


class FabricNetwork(SpecModel):
    network: str = Field(description="Name of an existing VPC network in the stack's project.")
    subnetwork: str = Field(description="Name of its subnetwork in the pool's region.")


class PoolFabric(SpecModel):
    mode: FabricMode = Field(
        FabricMode.AUTO,
        description=(
            "`auto` (default): a multi-node pool on a fabric-capable machine gets its fabric (GKE: GPUDirect-TCPX on "
            "A3 High, -TCPXO on A3 Mega, RDMA on A3 Ultra/A4, with the extra VPCs, multi-networking, NCCL plugin; EKS: "
            "every EFA interface), and its runtimes/NodeSets use it; single-node pools get none. `off`: no fabric (a "
            "warning names the bandwidth lost; the policy pack reports it). `existing`: GKE, attach your own networks. "
            "`managed`: GKE on A3 Ultra/A4 (RDMA), GKE creates and attaches the networks (`acceleratorNetworkProfile: "
            "auto`, GKE ≥ 1.34.1-gke.1829001, no other pool of the cluster on networks gpu-cluster attaches); jobs get "
            "every RDMA NIC through a DRA claim (ResourceClaimTemplate `rdma-<pool>`, DeviceClass `mrdma.google.com`) "
            "that the `torch-<pool>` runtime and the Slinky NodeSet reference; Kueue counts the NICs as quota "
            "(`gpu-cluster/rdma-nics`)."
        ),
    )
    networks: list[FabricNetwork] = Field(
        default_factory=list,
        description=(
            "`existing` only: the networks in NIC order. TCPX: 4, TCPXO: 8 gVNIC networks, each its own VPC; RDMA: 9, "
            "one gVNIC network then the 8 subnets of one RoCE VPC (created with the zone's `-vpc-roce` profile)."
        ),
    )
    shared_memory_gib: int | None = Field(
        None,
        alias="sharedMemoryGiB",
        ge=1,
        description=(
            "Size of the Memory `emptyDir` mounted at `/dev/shm` in the pool's fabric jobs (the `torch-<pool>` runtime, "
            "the Slinky NodeSet), in GiB; it counts against the node's RAM. Default: an eighth of the machine's RAM, at "
            "most 256 GiB (upstream's examples mount 1-250 GiB; without it a container gets 64 MiB)."
        ),
    )
    runtime_image: str | None = Field(
        None,
        alias="runtimeImage",
        min_length=1,
        description=(
            "The image of the pool's `torch-<pool>` training runtime (a TrainJob can still override it). Default: the "
            "PyTorch image of Kubeflow Trainer, and on EFA pools an image with libfabric's EFA provider and aws-ofi-nccl "
            "(the AWS Deep Learning Container `pytorch-training`, on arm64 pools `pytorch-training-arm64`, "
            "`catalog/data/fabric-images.csv`): without that plugin NCCL uses TCP sockets despite the EFA devices. With "
            "`workload: slurm` it is the NodeSet's slurmd image (tasks run in slurmd's container): Slinky's slurmd image "
            "has no EFA libraries, so an EFA pool needs one built with them (`images/slurmd-efa`, named by digest with "
            "`runtimeImageBuild`): validation refuses a multi-node EFA pool of a Slurm stack without one. On an EFA pool an image "
            "known to lack the plugin is a warning, and the contract counts only images the catalog vouches for."
        ),
    )
    runtime_image_build: ImageBuild | None = Field(
        None,
        alias="runtimeImageBuild",
        description=(
            "The recipe in this repository that `runtimeImage` was built from: `slurmd-efa` (`images/slurmd-efa/"
            "Dockerfile`: the pinned Slinky slurmd image + the pinned EFA installer, linux/amd64 and linux/arm64), for "
            "an EFA pool with `workload: slurm`. `runtimeImage` must then name the pushed image by digest "
            "(`<registry>/<repo>@sha256:<64 hex>`); the fabric contract takes the image's libraries and architectures "
            "from the recipe's catalog row, and the NodeSet's pod starts only if the image holds the recipe's marker "
            "and the EFA libraries (init container `fabric-image-check`). Default: none (the image must be one the "
            "catalog knows, `catalog/data/fabric-image-capabilities.csv`)."
        ),
    )
