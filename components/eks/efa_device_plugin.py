"""The AWS EFA device plugin on exactly the EKS pools that have EFA interfaces (multi-node pools)."""

from __future__ import annotations

from typing import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.network_policies import system_network_policies
from components.charts import AWS_EFA_DEVICE_PLUGIN
from components.k8s.objects import privileged_namespace
from components.image_digests import pinned_chart_values
from render.nvidia_values import efa_device_plugin_values
from stacks.plan.gpu_runtime_plan import GpuRuntimePlan

EFA_NAMESPACE = "aws-efa-device-plugin"


class AwsEfaDevicePlugin(pulumi.ComponentResource):
    """Advertises `vpc.amazonaws.com/efa` on the plan's EFA pools, so multi-node jobs can request the interfaces.
    Its own privileged namespace (the plugin runs privileged with host networking). Give it the cluster's
    Kubernetes provider."""

    release: k8s.helm.v3.Release

    def __init__(
        self,
        name: str,
        plan: GpuRuntimePlan,
        after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:aws:AwsEfaDevicePlugin", name, None, opts)
        ns = privileged_namespace(f"{name}-ns", EFA_NAMESPACE, parent=self, after=after)
        system_network_policies(name, EFA_NAMESPACE, ns, self)
        pin = AWS_EFA_DEVICE_PLUGIN
        self.release = k8s.helm.v3.Release(
            name,
            name=pin.chart,
            chart=pin.chart,
            version=pin.version,
            repository_opts={"repo": pin.repo},
            namespace=ns.metadata.name,
            create_namespace=False,
            values=pinned_chart_values(pin.chart, pin.version, efa_device_plugin_values(plan)),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[ns]),
        )
        self.register_outputs({"efaPools": [p.name for p in plan.efa_pools]})
