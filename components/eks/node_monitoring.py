"""The EKS node monitoring agent: it reads node logs and sets node conditions such as ``AcceleratedHardwareReady``
(NVIDIA XID errors, DCGM diagnostics) that EKS node auto repair acts on. gpu-cluster turns auto repair on for every
GPU node group (``node_repair_config``), which without the agent never sees a failed GPU ("Detect node health issues
and enable automatic node repair", EKS user guide: the agent and auto repair are "most effective when used
together"). The add-on version is left to EKS: it installs the default version for the cluster's Kubernetes
version."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.cluster_refs import EksClusterRef

ADDON = "eks-node-monitoring-agent"


class EksNodeMonitoring(pulumi.ComponentResource):
    addon: aws.eks.Addon

    def __init__(
        self, name: str, cluster: EksClusterRef, tags: dict[str, str], opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("gpu-cluster:aws:EksNodeMonitoring", name, None, opts)
        self.addon = aws.eks.Addon(
            f"{name}-agent",
            cluster_name=cluster.name,
            addon_name=ADDON,
            resolve_conflicts_on_create="OVERWRITE",
            tags=tags or None,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"addon": ADDON})
