"""Register a rendered Kubernetes object (a plain dict from ``render/``) as a Pulumi resource, field for field.

Custom resources go through the provider's generic ``kubernetes:<apiVersion>:<Kind>`` type, which takes every
top-level field of the object (a Kueue WorkloadPriorityClass has ``value`` and ``description`` beside its metadata,
which the Python ``CustomResource`` class cannot express). Policies read these inputs directly.
"""

from __future__ import annotations

import functools
import importlib.metadata
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from components.image_digests import pin_images

from render.kueue import REPLACED_FIELDS

DELETE_FIRST_FIELDS: dict[str, list[str]] = {
    # The LocalQueue's name is the queue's (teams submit to it), so it cannot take a hash. gpu-cluster names it after
    # its ClusterQueue, so the field only changes together with the name (a new Pulumi resource): kept for objects
    # renamed by hand.
    "LocalQueue": ["spec.clusterQueue"],
}
"""Kueue rejects changes to these; the object keeps its name, so Pulumi deletes it before creating it again."""
CONTENT_NAMED_FIELDS: dict[str, list[str]] = {kind: list(paths) for kind, paths in REPLACED_FIELDS.items()}
"""ResourceFlavor and Topology: Kueue keeps a resource-in-use finalizer on them while they are referenced, so deleting
first would wait forever. Their names hash these fields (render/kueue.py), so a change is a create of a new object,
the referrers' update, then the old object's delete: Pulumi's default create-before-delete replacement."""


@functools.cache
def kubernetes_provider_version() -> str:
    """The Kubernetes provider plugin version the installed ``pulumi_kubernetes`` classes pin, for the generic types.

    requirements.txt pins a release (X.Y.Z), whose PEP 440 version is also the plugin's semver; the SDK converts
    only pre-release tags (``4.0.0a1`` -> ``4.0.0-alpha.1``), which a pin never uses (tested).
    """
    return importlib.metadata.version("pulumi_kubernetes")


def custom_resource(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """One custom resource; a change of an immutable field replaces the object (see the two tables above)."""
    kind = obj["kind"]
    if kind in DELETE_FIRST_FIELDS:
        opts = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(replace_on_changes=DELETE_FIRST_FIELDS[kind], delete_before_replace=True)
        )
    elif kind in CONTENT_NAMED_FIELDS:
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(replace_on_changes=CONTENT_NAMED_FIELDS[kind]))
    opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=kubernetes_provider_version()))
    return pulumi.CustomResource(
        f"kubernetes:{obj['apiVersion']}:{obj['kind']}",
        name,
        pin_images(dict(obj), quoted=kind == "ValidatingAdmissionPolicy"),
        opts,
    )


def namespace(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> k8s.core.v1.Namespace:
    """A core v1 Namespace from a rendered object (its labels carry the Pod Security level)."""
    return k8s.core.v1.Namespace(name, metadata=obj["metadata"], opts=opts)
