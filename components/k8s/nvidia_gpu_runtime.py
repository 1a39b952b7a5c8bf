"""The cluster-wide NVIDIA GPU runtime: device plugin chart and/or GPU Operator, each on exactly its pools, plus
Google's COS driver installer on GKE pools where GKE does not install the driver."""

from __future__ import annotations

from typing import Sequence

import pulumi
import pulumi_kubernetes as k8s

from catalog import Cloud
from components.k8s.network_policies import system_network_policies
from components.charts import COS_DRIVER_INSTALLER, GPU_OPERATOR, NVIDIA_DEVICE_PLUGIN, ChartPin
from components.k8s.objects import config_map, critical_pods_quota, privileged_namespace
from components.image_digests import pinned_chart_values
from render.nvidia_values import (
    DEVICE_LIST_STRATEGY,
    OPERATOR_MIG_STRATEGY,
    critical_pods_budget,
    device_plugin_values,
    gpu_operator_values,
    sharing_config_data,
)
from stacks.plan.facts import PoolFacts
from stacks.plan.gpu_runtime_plan import GpuRuntimePlan

DEVICE_PLUGIN_NAMESPACE = "nvidia-device-plugin"
GPU_OPERATOR_NAMESPACE = "gpu-operator"
SHARING_CONFIG_MAP = "gpu-cluster-device-plugin-config"


class NvidiaGpuRuntime(pulumi.ComponentResource):
    """Installs what `plan` asks for, with `helm.v3.Release` so policies can read the values.

    Per chart: a namespace labelled for the privileged Pod Security level, on GKE a quota that admits
    system-node-critical pods there, a device plugin config map when a pool time-slices or uses MPS (each such pool
    selects its entry with the `nvidia.com/device-plugin.config` node label), and the release. Daemons select
    exactly their pools by the `gpu-cluster/pool` label. Give it the cluster's Kubernetes provider.
    """

    device_plugin: k8s.helm.v3.Release | None
    gpu_operator: k8s.helm.v3.Release | None
    cos_driver_installer: k8s.yaml.v2.ConfigFile | None

    def __init__(
        self,
        name: str,
        plan: GpuRuntimePlan,
        after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:k8s:NvidiaGpuRuntime", name, None, opts)
        # children do not inherit a component's depends_on (pulumi/pulumi#8721): the roots wait for ``after``
        self._after = list(after)
        self.device_plugin = self.gpu_operator = self.cos_driver_installer = None
        if plan.cos_driver_installer is not None:
            # installs DaemonSet kube-system/nvidia-driver-installer; it skips nodes where GKE installs the driver
            self.cos_driver_installer = k8s.yaml.v2.ConfigFile(
                f"{name}-cos-driver-installer",
                file=COS_DRIVER_INSTALLER[plan.cos_driver_installer],
                opts=pulumi.ResourceOptions(parent=self, depends_on=self._after),
            )
        if plan.device_plugin_pools:
            data = sharing_config_data(plan, plan.device_plugin_pools, "none", DEVICE_LIST_STRATEGY)
            self.device_plugin = self._install(
                f"{name}-device-plugin",
                NVIDIA_DEVICE_PLUGIN,
                DEVICE_PLUGIN_NAMESPACE,
                plan,
                plan.device_plugin_pools,
                data,
                device_plugin_values(plan, SHARING_CONFIG_MAP if data else None),
            )
        if plan.operator_pools:
            data = sharing_config_data(plan, plan.operator_pools, OPERATOR_MIG_STRATEGY)
            self.gpu_operator = self._install(
                f"{name}-gpu-operator",
                GPU_OPERATOR,
                GPU_OPERATOR_NAMESPACE,
                plan,
                plan.operator_pools,
                data,
                gpu_operator_values(plan, SHARING_CONFIG_MAP if data else None),
            )
        self.register_outputs(
            {
                "devicePluginPools": [p.name for p in plan.device_plugin_pools],
                "gpuOperatorPools": [p.name for p in plan.operator_pools],
                "cosDriverInstaller": plan.cos_driver_installer.value if plan.cos_driver_installer else None,
            }
        )

    def _install(
        self,
        prefix: str,
        pin: ChartPin,
        namespace: str,
        plan: GpuRuntimePlan,
        pools: tuple[PoolFacts, ...],
        config_data: dict[str, str],
        values: dict,
    ) -> k8s.helm.v3.Release:
        ns = privileged_namespace(f"{prefix}-ns", namespace, parent=self, after=self._after)
        system_network_policies(prefix, namespace, ns, self)
        before: list[pulumi.Resource] = [ns]
        if plan.cloud == Cloud.GCP:
            before.append(critical_pods_quota(f"{prefix}-quota", ns, critical_pods_budget(pools), parent=self))
        if config_data:
            before.append(config_map(f"{prefix}-config", SHARING_CONFIG_MAP, ns, config_data, parent=self))
        return k8s.helm.v3.Release(
            prefix,
            name=pin.chart,
            chart=pin.chart,
            version=pin.version,
            repository_opts={"repo": pin.repo},
            namespace=ns.metadata.name,
            create_namespace=False,
            values=pinned_chart_values(pin.chart, pin.version, values),
            opts=pulumi.ResourceOptions(parent=self, depends_on=before),
        )
