"""What the cluster-wide GPU runtime installs, and for exactly which pools. Pure: no Pulumi.

Built from the pools' derived facts (``stacks/plan/facts.py``), so the components never re-derive ownership.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog import Cloud
from stacks.plan.facts import PoolFacts
from stacks.spec.gpu_runtime import DriverVersion, GpuRuntimeMode, SharingMode
from stacks.spec.stack import StackSpec


@dataclass(frozen=True)
class GpuRuntimePlan:
    cloud: Cloud
    device_plugin_pools: tuple[PoolFacts, ...]
    """Pools whose GPUs the NVIDIA device plugin chart advertises."""
    operator_pools: tuple[PoolFacts, ...]
    """Pools the GPU Operator serves (device plugin, MIG manager, DCGM exporter, GFD)."""
    efa_pools: tuple[PoolFacts, ...]
    """EKS pools whose EFA interfaces the AWS EFA device plugin advertises."""
    cos_driver_installer: DriverVersion | None
    """GKE: the version of Google's COS driver installer, when some pool turns GKE's driver install off."""
    gpu_feature_discovery: bool
    dcgm_exporter: bool

    @property
    def empty(self) -> bool:
        return not (self.device_plugin_pools or self.operator_pools or self.efa_pools or self.cos_driver_installer)

    @property
    def mig_pools(self) -> tuple[PoolFacts, ...]:
        return tuple(p for p in self.operator_pools if p.resolved_runtime.mig is not None)

    def shared_pools(self, pools: tuple[PoolFacts, ...]) -> tuple[PoolFacts, ...]:
        """Pools with time-slicing or MPS: each needs its own entry in the device plugin config map."""
        return tuple(p for p in pools if p.resolved_runtime.sharing in (SharingMode.TIME_SLICING, SharingMode.MPS))


def runtime_plan(spec: StackSpec, pools: list[PoolFacts]) -> GpuRuntimePlan:
    def served(mode: GpuRuntimeMode) -> tuple[PoolFacts, ...]:
        return tuple(p for p in pools if p.resolved_runtime.mode == mode)

    operator = served(GpuRuntimeMode.GPU_OPERATOR)
    not_gke = [p for p in pools if p.resolved_runtime.mode != GpuRuntimeMode.GKE_MANAGED]
    rt = spec.gpu_runtime
    return GpuRuntimePlan(
        cloud=spec.cloud,
        device_plugin_pools=served(GpuRuntimeMode.DEVICE_PLUGIN),
        operator_pools=operator,
        efa_pools=tuple(p for p in pools if p.resolved_runtime.efa_device_plugin),
        # validation guarantees these pools agree on one version (one installer DaemonSet per cluster)
        cos_driver_installer=not_gke[0].resolved_runtime.driver_version
        if spec.cloud == Cloud.GCP and not_gke
        else None,
        gpu_feature_discovery=rt.gpu_feature_discovery,
        dcgm_exporter=rt.dcgm_exporter if rt.dcgm_exporter is not None else bool(operator),
    )
