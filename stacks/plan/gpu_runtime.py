"""Who drives and advertises the GPUs of each pool: derived once from spec + catalog, read by the pool components,
the GPU runtime component, the preview and the stack outputs. Pure: no Pulumi.

Ownership model (one ``nvidia.com/gpu`` advertiser per node):
- ``gke-managed``: GKE installs the driver and runs its device plugin; sharing is a node pool setting.
- ``device-plugin`` / ``gpu-operator`` on GKE: the pool turns GKE's driver install off and carries
  ``gke-no-default-nvidia-gpu-device-plugin=true`` so GKE's plugin stays away; Google's COS driver installer
  DaemonSet installs the driver (it skips pools where GKE installs one).
- On EKS the NVIDIA AMI ships the driver, so no chart installs one.
- When any pool uses the GPU Operator, every other pool carries ``nvidia.com/gpu.deploy.operands=false``, because
  the operator otherwise deploys its device plugin on every GPU node it finds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from catalog import Cloud, MachineType, MigCatalog, MigProfile
from stacks.spec.gpu_runtime import DriverVersion, GpuRuntime, GpuRuntimeMode, GpuSharing, SharingMode
from stacks.spec.stack import NodePool, StackSpec

GKE_NO_DEFAULT_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
"""Selects this node's entry in the device plugin's config map (time-slicing / MPS settings)."""
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
"""Tells the GPU Operator's MIG manager which layout to apply (``all-<profile>``)."""
OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"
RUNTIME_LABEL_KEYS = (GKE_NO_DEFAULT_PLUGIN_LABEL, DEVICE_PLUGIN_CONFIG_LABEL, MIG_CONFIG_LABEL, OPERANDS_LABEL)
RUNTIME_LABEL_PREFIXES = ("nvidia.com/gpu.deploy.", "nvidia.com/mig.")
"""Node labels the GPU runtime owns: a user label with these keys would change who advertises the GPUs."""
DEFAULT_MODE = {Cloud.GCP: GpuRuntimeMode.GKE_MANAGED, Cloud.AWS: GpuRuntimeMode.DEVICE_PLUGIN}


class Advertiser(str, Enum):
    """The one component that advertises ``nvidia.com/gpu`` on a pool's nodes."""

    GKE = "GKE device plugin"
    DEVICE_PLUGIN_CHART = "NVIDIA device plugin (chart)"
    GPU_OPERATOR = "GPU Operator device plugin"


ADVERTISER = {
    GpuRuntimeMode.GKE_MANAGED: Advertiser.GKE,
    GpuRuntimeMode.DEVICE_PLUGIN: Advertiser.DEVICE_PLUGIN_CHART,
    GpuRuntimeMode.GPU_OPERATOR: Advertiser.GPU_OPERATOR,
}


@dataclass(frozen=True)
class EffectiveRuntime:
    """The stack's ``gpuRuntime`` with one pool's overrides applied, plus where each value was written."""

    mode: GpuRuntimeMode
    driver_version: DriverVersion
    sharing: GpuSharing
    efa_requested: bool
    origin: dict[str, tuple] = field(default_factory=dict, compare=False)
    """Field -> config path parts (``("nodePools", 2, "gpuRuntime", "sharing")``) of the value in effect."""


def effective_runtime(cloud: Cloud, stack: GpuRuntime, pool: NodePool, index: int) -> EffectiveRuntime:
    over = pool.gpu_runtime
    origin: dict[str, tuple] = {}

    def pick(name: str, alias: str, stack_value: Any) -> Any:
        value = getattr(over, name) if over is not None else None
        if value is not None:
            origin[name] = ("nodePools", index, "gpuRuntime", alias)
            return value
        origin[name] = ("gpuRuntime", alias)
        return stack_value

    mode = pick("mode", "mode", stack.mode or DEFAULT_MODE[cloud])
    driver = pick("driver_version", "driverVersion", stack.driver_version)
    sharing = pick("sharing", "sharing", stack.sharing)
    efa_default = stack.efa_device_plugin if stack.efa_device_plugin is not None else cloud == Cloud.AWS
    efa = pick("efa_device_plugin", "efaDevicePlugin", efa_default)
    return EffectiveRuntime(mode=mode, driver_version=driver, sharing=sharing, efa_requested=bool(efa), origin=origin)


def operator_in_stack(spec: StackSpec) -> bool:
    """Some pool uses the GPU Operator (cheap: called once per pool while building facts)."""
    default = spec.gpu_runtime.mode or DEFAULT_MODE[spec.cloud]
    return any(
        ((p.gpu_runtime.mode if p.gpu_runtime else None) or default) == GpuRuntimeMode.GPU_OPERATOR
        for p in spec.node_pools
    )


@dataclass(frozen=True)
class PoolRuntime:
    mode: GpuRuntimeMode
    advertiser: Advertiser
    driver_version: DriverVersion
    driver_source: str
    """Who installs the driver, for people: ``GKE (DEFAULT)``, ``COS driver installer (default)``, ``EKS NVIDIA AMI``."""
    sharing: SharingMode
    replicas: int
    """Pods per physical GPU with time-slicing / MPS; 1 otherwise."""
    mig: MigProfile | None
    efa_device_plugin: bool
    node_labels: dict[str, str]
    """Labels the runtime puts on the pool's nodes (merged into the pool's labels by the pool components)."""
    gpus_per_node: int

    @property
    def advertised_per_gpu(self) -> int:
        if self.mig is not None:
            return self.mig.max_instances_per_gpu
        return self.replicas

    @property
    def advertised_gpus_per_node(self) -> int:
        """Schedulable ``nvidia.com/gpu`` per node (physical GPUs × slices); cost stays per physical GPU."""
        return self.gpus_per_node * self.advertised_per_gpu

    @property
    def sharing_summary(self) -> str:
        if self.mig is not None:
            return f"mig {self.mig.profile} ×{self.mig.max_instances_per_gpu}"
        if self.sharing in (SharingMode.TIME_SLICING, SharingMode.MPS):
            return f"{self.sharing.value} ×{self.replicas}"
        return "none"

    def as_dict(self) -> dict:
        """For stack outputs and the preview JSON: who advertises, how it is shared, what the scheduler sees."""
        return {
            "mode": self.mode.value,
            "advertiser": self.advertiser.value,
            "driver": self.driver_source,
            "sharing": self.sharing_summary,
            "physicalGpusPerNode": self.gpus_per_node,
            "advertisedGpusPerNode": self.advertised_gpus_per_node,
            "efaDevicePlugin": self.efa_device_plugin,
        }

    @property
    def gke_driver_installation(self) -> str:
        """GKE ``gpu_driver_installation_config.gpu_driver_version`` for the pool."""
        if self.mode != GpuRuntimeMode.GKE_MANAGED:
            return "INSTALLATION_DISABLED"
        return "LATEST" if self.driver_version == DriverVersion.LATEST else "DEFAULT"

    @property
    def gke_accelerator_sharing(self) -> dict:
        """GKE guest accelerator settings for gke-managed sharing (empty otherwise)."""
        if self.mode != GpuRuntimeMode.GKE_MANAGED:
            return {}
        if self.mig is not None:
            return {"gpu_partition_size": self.mig.profile}
        if self.sharing in (SharingMode.TIME_SLICING, SharingMode.MPS):
            strategy = "TIME_SHARING" if self.sharing == SharingMode.TIME_SLICING else "MPS"
            return {
                "gpu_sharing_config": {"gpu_sharing_strategy": strategy, "max_shared_clients_per_gpu": self.replicas}
            }
        return {}

    @property
    def device_plugin_config(self) -> str | None:
        """Name of this pool's entry in the device plugin config map, or None when the default entry applies."""
        if self.mode == GpuRuntimeMode.GKE_MANAGED or self.sharing not in (SharingMode.TIME_SLICING, SharingMode.MPS):
            return None
        return self.node_labels[DEVICE_PLUGIN_CONFIG_LABEL]


def pool_runtime(
    cloud: Cloud, eff: EffectiveRuntime, pool: NodePool, machine: MachineType, mig: MigCatalog, operator_in_stack: bool
) -> PoolRuntime:
    """Resolve one (validated) pool's runtime: advertiser, driver, sharing, and the node labels that enforce it."""
    sharing = eff.sharing
    profile = mig.profile(machine.gpu_model, sharing.mig_profile or "") if sharing.mode == SharingMode.MIG else None
    replicas = sharing.replicas if sharing.mode in (SharingMode.TIME_SLICING, SharingMode.MPS) else 1
    labels: dict[str, str] = {}
    if eff.mode != GpuRuntimeMode.GKE_MANAGED:
        if cloud == Cloud.GCP:
            labels[GKE_NO_DEFAULT_PLUGIN_LABEL] = "true"
        if sharing.mode in (SharingMode.TIME_SLICING, SharingMode.MPS):
            labels[DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
        if profile is not None:
            labels[MIG_CONFIG_LABEL] = f"all-{profile.profile}"
    if operator_in_stack and eff.mode != GpuRuntimeMode.GPU_OPERATOR:
        labels[OPERANDS_LABEL] = "false"
    if cloud == Cloud.AWS:
        source = "EKS NVIDIA AMI"
    elif eff.mode == GpuRuntimeMode.GKE_MANAGED:
        source = f"GKE ({eff.driver_version.value.upper()})"
    else:
        source = f"COS driver installer ({eff.driver_version.value})"
    return PoolRuntime(
        mode=eff.mode,
        advertiser=ADVERTISER[eff.mode],
        driver_version=eff.driver_version,
        driver_source=source,
        sharing=sharing.mode,
        replicas=replicas or 1,
        mig=profile,
        efa_device_plugin=cloud == Cloud.AWS and eff.efa_requested and pool.multi_node,
        node_labels=labels,
        gpus_per_node=machine.gpus,
    )
