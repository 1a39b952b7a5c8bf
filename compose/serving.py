"""The serving layer (``gpu-cluster:serving``): rendered from the plan once here, installed after the cluster and,
with Kueue, after Kueue (whose serving ClusterQueue, LocalQueue and namespace the pods are admitted through)."""
from __future__ import annotations

from typing import Sequence

import pulumi

from render.serving import render_serving
from stacks.plan.stack import StackPlan


def build_serving(plan: StackPlan, cluster: pulumi.Resource, k8s_provider: pulumi.ProviderResource,
                  after: Sequence[pulumi.Resource] = ()) -> None:
    """Nothing when the stack declares no serving. ``after``: Kueue's release and the serving namespace it creates."""
    serving = plan.spec.serving
    if serving is None:
        return
    from components.k8s.serving import Serving

    facts = {f.name: f for f in plan.facts}
    objects = render_serving(serving, facts, plan.cloud, plan.spec.region, plan.spec.project, plan.kueue is not None)
    Serving("serving", objects, lws=any(s.nodes_per_replica > 1 for s in serving.services),
            after=[cluster, *after], opts=pulumi.ResourceOptions(providers=[k8s_provider]))
