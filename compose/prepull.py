"""The pre-pull DaemonSets of the pools with ``podStart.prepull`` (both clouds), after the cluster exists."""

from __future__ import annotations

import pulumi

from components.k8s.image_prepull import ImagePrepull
from stacks.plan.stack import StackPlan


def build_prepull(plan: StackPlan, cluster: pulumi.Resource, k8s_provider: pulumi.ProviderResource) -> None:
    if plan.prepull:
        ImagePrepull(
            "image-prepull", plan.prepull, opts=pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
        )
