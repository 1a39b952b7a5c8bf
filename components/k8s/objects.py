"""Small Kubernetes objects the add-on components share: a privileged namespace, GKE's critical-pod quota, a
config map. Each is created as a child of the calling component."""

from __future__ import annotations

from typing import Sequence

import pulumi
import pulumi_kubernetes as k8s

MANAGED_BY = {"app.kubernetes.io/managed-by": "gpu-cluster"}
PRIVILEGED_PSA = {f"pod-security.kubernetes.io/{mode}": "privileged" for mode in ("enforce", "audit", "warn")}
"""Device plugins and GPU Operator operands mount host paths and run privileged: the namespace must allow it
(and only these namespaces do)."""
CRITICAL_PRIORITY_CLASSES = ["system-node-critical", "system-cluster-critical"]


def privileged_namespace(
    resource_name: str, namespace: str, parent: pulumi.Resource, after: Sequence[pulumi.Resource] = ()
) -> k8s.core.v1.Namespace:
    """``after``: what the namespace (and so everything in it) waits for, e.g. the cluster and its system pool."""
    return k8s.core.v1.Namespace(
        resource_name,
        metadata={"name": namespace, "labels": {**PRIVILEGED_PSA, **MANAGED_BY}},
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(after)),
    )


def critical_pods_quota(
    resource_name: str, namespace: k8s.core.v1.Namespace, pods: int, parent: pulumi.Resource
) -> k8s.core.v1.ResourceQuota:
    """GKE only admits system-node-critical / system-cluster-critical pods outside kube-system when a ResourceQuota
    scoped to those priority classes exists in the namespace (NVIDIA's GKE guide creates the same)."""
    return k8s.core.v1.ResourceQuota(
        resource_name,
        metadata={"name": "gpu-cluster-critical-pods", "namespace": namespace.metadata.name, "labels": MANAGED_BY},
        spec={
            "hard": {"pods": str(pods)},
            "scope_selector": {
                "match_expressions": [
                    {"operator": "In", "scope_name": "PriorityClass", "values": CRITICAL_PRIORITY_CLASSES}
                ]
            },
        },
        opts=pulumi.ResourceOptions(parent=parent),
    )


def config_map(
    resource_name: str, name: str, namespace: k8s.core.v1.Namespace, data: dict[str, str], parent: pulumi.Resource
) -> k8s.core.v1.ConfigMap:
    return k8s.core.v1.ConfigMap(
        resource_name,
        metadata={"name": name, "namespace": namespace.metadata.name, "labels": MANAGED_BY},
        data=data,
        opts=pulumi.ResourceOptions(parent=parent),
    )
