"""Device plugin / GPU Operator / COS driver installer, and the EFA plugin on EKS: only what the pools need."""

from __future__ import annotations

import pulumi

from components.eks.efa_device_plugin import AwsEfaDevicePlugin
from components.k8s.nvidia_gpu_runtime import NvidiaGpuRuntime
from stacks.plan.stack import StackPlan


def build_gpu_runtime(stack: StackPlan, cluster: pulumi.Resource, k8s_provider: pulumi.ProviderResource) -> None:
    plan = stack.runtime
    # after the cluster (and its system pool, where the operator runs); through the cluster's Kubernetes provider
    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    if plan.device_plugin_pools or plan.operator_pools or plan.cos_driver_installer:
        NvidiaGpuRuntime("gpu-runtime", plan, after=[cluster], opts=opts)
    if plan.efa_pools:
        AwsEfaDevicePlugin("efa-device-plugin", plan, after=[cluster], opts=opts)
