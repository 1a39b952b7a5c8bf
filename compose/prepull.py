"""The pre-pull DaemonSets of the pools with ``podStart.prepull`` (both clouds), after the cluster exists."""
from __future__ import annotations

import pulumi

from components.k8s.image_prepull import ImagePrepull
from plan.facts import PoolFacts
from plan.pod_start import pod_start_plan
from spec.stack import StackSpec


def build_prepull(spec: StackSpec, pools: dict[str, PoolFacts], cluster: pulumi.Resource, k8s_provider) -> None:
    wanted = []
    for pool in spec.node_pools:
        plan = pod_start_plan(spec.cloud, pool)
        if plan.prepull:
            wanted.append((pools[pool.name], [image.text for image in plan.images]))
    if wanted:
        ImagePrepull("image-prepull", wanted,
                     opts=pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster]))
