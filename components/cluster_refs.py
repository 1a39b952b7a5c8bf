"""What node pools and add-ons need to know about the cluster they join (created here or found by name)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s


@dataclass
class GkeClusterRef:
    spec_name: str
    """The cluster name the user wrote (known at preview, unlike ``name``)."""
    name: pulumi.Input[str]
    location: str
    project: str
    k8s_provider: k8s.Provider


@dataclass
class EksClusterRef:
    spec_name: str
    """The cluster name the user wrote (known at preview: ASG tag keys and IAM conditions use it)."""
    name: pulumi.Input[str]
    region: str
    node_role_arn: pulumi.Input[str]
    cluster_security_group_id: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    subnets: dict[str, str] = field(default_factory=dict)
    """Availability Zone -> private subnet ID, from the spec."""
    k8s_provider: k8s.Provider | None = None
    kubernetes_version: pulumi.Input[str] | None = None
    """The control plane's minor version: the spec's (created clusters) or the one EKS reports (existing)."""
    system_node_selector: dict[str, str] | None = None
    """Node labels of the system node group the stack created; None for existing clusters (their add-on nodes are
    not ours to label: add-ons stay off GPU nodes by not tolerating the GPU taint)."""
    arn: pulumi.Input[str] | None = None
    """``arn:aws:eks:<region>:<account>:cluster/<name>`` (Pod Identity trust policies name it)."""
