"""Register a rendered Kubernetes object (a plain dict from ``scheduling/``) as a Pulumi resource, field for field.

Custom resources go through the provider's generic ``kubernetes:<apiVersion>:<Kind>`` type, which takes every
top-level field of the object (a Kueue WorkloadPriorityClass has ``value`` and ``description`` beside its metadata,
which the Python ``CustomResource`` class cannot express). Policies read these inputs directly.
"""
from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes import _utilities as _k8s_utilities

IMMUTABLE_FIELDS: dict[str, list[str]] = {
    # Kueue rejects changes to these; Pulumi must delete and recreate the object (same name) instead of patching.
    "LocalQueue": ["spec.clusterQueue"],
    "Topology": ["spec.levels"],
    "ResourceFlavor": ["spec.topologyName", "spec.nodeLabels", "spec.tolerations"],
}


def custom_resource(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """One custom resource; objects with immutable fields are replaced (delete first: the name is fixed) on change."""
    replace = IMMUTABLE_FIELDS.get(obj["kind"])
    if replace:
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(replace_on_changes=replace,
                                                                         delete_before_replace=True))
    opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=_k8s_utilities.get_version()))
    return pulumi.CustomResource(f"kubernetes:{obj['apiVersion']}:{obj['kind']}", name, dict(obj), opts)


def namespace(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> k8s.core.v1.Namespace:
    """A core v1 Namespace from a rendered object (its labels carry the Pod Security level)."""
    return k8s.core.v1.Namespace(name, metadata=obj["metadata"], opts=opts)
