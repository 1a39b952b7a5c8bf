"""The DRA ResourceClaimTemplates through which jobs on GKE-managed fabric pools get the nodes' RDMA NICs (rendered by
``render/fabric_claim.py``): one per managed pool and namespace its jobs run in. The ``torch-<pool>`` runtimes
and Slinky NodeSets reference them by name (``resourceClaims[].resourceClaimTemplateName``)."""

from __future__ import annotations

from typing import Any, Sequence

import pulumi

from components.k8s.custom_resources import custom_resource


class FabricClaims(pulumi.ComponentResource):
    """Creates each template (``resource.k8s.io/v1`` ResourceClaimTemplate) after ``after`` (its namespaces)."""

    templates: list[str]
    """``<namespace>/<name>`` of every template, in the order given."""

    def __init__(
        self,
        name: str,
        templates: Sequence[dict[str, Any]],
        after: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:scheduling:FabricClaims", name, None, opts)
        self.templates = []
        for obj in templates:
            meta = obj["metadata"]
            custom_resource(
                f"{name}-{meta['namespace']}-{meta['name']}",
                obj,
                pulumi.ResourceOptions(parent=self, depends_on=list(after)),
            )
            self.templates.append(f"{meta['namespace']}/{meta['name']}")
        self.register_outputs({"templates": self.templates})
