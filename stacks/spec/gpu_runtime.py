"""The GPU runtime spec (``gpu-cluster:gpuRuntime``, overridable per pool): who installs the NVIDIA driver and who
advertises ``nvidia.com/gpu`` on each pool, and how GPUs are shared.

Shape only lives here. Cross-field rules (one advertiser per pool, MIG profiles per GPU model, EFA only on EFA
pools, cloud-specific modes) live in ``stacks/validate/gpu_runtime.py``; derived per-pool facts in
``stacks/plan/gpu_runtime.py``.
"""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from stacks.spec.model_base import SpecModel

MAX_SHARED_CLIENTS_PER_GPU = 48
"""GKE's limit for time-sharing and MPS clients per GPU; the same bound applies on EKS."""


class GpuRuntimeMode(str, Enum):
    GKE_MANAGED = "gke-managed"
    """GKE installs the driver and runs its own device plugin (GKE only)."""
    DEVICE_PLUGIN = "device-plugin"
    """The NVIDIA k8s-device-plugin chart advertises the GPUs (EKS only)."""
    GPU_OPERATOR = "gpu-operator"
    """The NVIDIA GPU Operator chart runs the device plugin (plus MIG manager, DCGM exporter, GFD)."""


class DriverVersion(str, Enum):
    DEFAULT = "default"
    LATEST = "latest"


class SharingMode(str, Enum):
    NONE = "none"
    TIME_SLICING = "time-slicing"
    MPS = "mps"
    MIG = "mig"


class GpuSharing(SpecModel):
    mode: SharingMode = Field(
        SharingMode.NONE,
        description=(
            "`none` (default): one pod per GPU. `time-slicing` or `mps`: `replicas` pods share each GPU. `mig`: every GPU "
            "is split into `migProfile` instances. Anything but `none` is refused on a pool of a `workload: slurm` stack "
            "(its Slurm NodeSet declares whole GPUs)."
        ),
    )
    replicas: int | None = Field(
        None,
        ge=2,
        le=MAX_SHARED_CLIENTS_PER_GPU,
        description=(
            f"`time-slicing` and `mps` only (required there): pods per physical GPU, 2-{MAX_SHARED_CLIENTS_PER_GPU}. "
            "Each node then advertises GPUs × replicas `nvidia.com/gpu`; cost stays per physical GPU."
        ),
    )
    mig_profile: str | None = Field(
        None,
        description=(
            "`mig` only (required there): the MIG profile for every GPU of the pool, e.g. `1g.10gb` on H100 80GB. "
            "Must exist for the pool's GPU model (see the MIG table in catalog/data/mig-profiles.csv)."
        ),
    )


class PoolGpuRuntime(SpecModel):
    """Per-pool overrides of the stack's ``gpuRuntime``; an omitted field inherits the stack's value."""

    mode: GpuRuntimeMode | None = Field(None, description="Overrides `gpuRuntime.mode` for this pool.")
    driver_version: DriverVersion | None = Field(
        None, description=("Overrides `gpuRuntime.driverVersion` for this pool.")
    )
    sharing: GpuSharing | None = Field(
        None, description=("Replaces `gpuRuntime.sharing` for this pool (the whole object, not field by field).")
    )
    efa_device_plugin: bool | None = Field(
        None,
        description=(
            "EKS only: overrides `gpuRuntime.efaDevicePlugin` for this pool. `true` needs an EFA pool (`multiNode`)."
        ),
    )


class GpuRuntime(SpecModel):
    mode: GpuRuntimeMode | None = Field(
        None,
        description=(
            "Who advertises `nvidia.com/gpu`: `gke-managed` (GKE's driver and device plugin; GKE only), `device-plugin` "
            "(NVIDIA k8s-device-plugin chart; EKS only, GKE's COS nodes lack the NVIDIA container toolkit it needs) or "
            "`gpu-operator` (NVIDIA GPU Operator chart). Omitted: `gke-managed` on GKE, `device-plugin` on EKS. Exactly "
            "one advertiser runs on each pool."
        ),
    )
    driver_version: DriverVersion = Field(
        DriverVersion.DEFAULT,
        description=(
            "`default`: the platform's tested driver (GKE's default for the node version; on GKE without "
            "`gke-managed`, Google's COS driver installer; on EKS, the NVIDIA AMI's). `latest`: GKE's latest driver "
            "(GKE only). Neither chart installs a driver: EKS AMIs ship one and GKE's COS nodes cannot take NVIDIA's."
        ),
    )
    sharing: GpuSharing = Field(
        default_factory=GpuSharing,
        description=("GPU sharing for every pool that does not set its own (default: none)."),
    )
    gpu_feature_discovery: bool = Field(
        True,
        description=(
            "Label GPU nodes with GPU Feature Discovery (`nvidia.com/gpu.product`, …) wherever the device-plugin chart "
            "or the GPU Operator runs. Default true. GKE-managed pools carry GKE's own labels instead."
        ),
    )
    dcgm_exporter: bool | None = Field(
        None,
        description=(
            "GPU metrics through the GPU Operator's DCGM exporter. Omitted: on when a pool uses `gpu-operator`. `true` "
            "needs a `gpu-operator` pool (the device-plugin chart has no exporter)."
        ),
    )
    efa_device_plugin: bool | None = Field(
        None,
        description=(
            "EKS only: install the AWS EFA device plugin on multi-node (EFA) pools so pods can request "
            "`vpc.amazonaws.com/efa`. Omitted: true on EKS."
        ),
    )
