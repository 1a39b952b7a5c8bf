"""The serving layer (``gpu-cluster:serving``): rendered from the plan once here, installed after the cluster and,
with Kueue, after Kueue (whose serving ClusterQueue, LocalQueue and namespace the pods are admitted through)."""

from __future__ import annotations

from typing import Mapping, Sequence

import pulumi

from catalog import Cloud
from render.serving import render_serving
from stacks.plan.serving import ready_timeout_s
from stacks.plan.stack import StackPlan


def build_serving(
    plan: StackPlan,
    cluster: pulumi.Resource,
    k8s_provider: pulumi.ProviderResource,
    after: Sequence[pulumi.Resource] = (),
    cloud_provider: pulumi.ProviderResource | None = None,
    cluster_name: pulumi.Input[str] | None = None,
    node_pools: Mapping[str, pulumi.Resource] | None = None,
) -> None:
    """Nothing when the stack declares no serving. ``after``: Kueue's release and the serving namespace it creates.
    The weights and metrics identities come first: the pods and KEDA read as them from their first start. Each
    service's workload waits for its GPU pool (``node_pools``) and for as long as its ready budget."""
    serving = plan.spec.serving
    if serving is None:
        return
    from components.k8s.serving import Serving
    from components.k8s.serving_identity import ServingIdentity

    facts = {f.name: f for f in plan.facts}
    objects = render_serving(
        serving,
        facts,
        plan.cloud,
        plan.spec.region,
        plan.spec.project,
        plan.kueue is not None,
        cluster=plan.cluster.name,
        account=plan.spec.account_id,
    )
    gke = plan.cloud == Cloud.GCP
    ref = getattr(cluster, "ref", None)
    identity = ServingIdentity(
        "serving-identity",
        [s.weights for s in objects.services if s.weights is not None],
        objects.metrics,
        gke,
        project=plan.spec.project,
        cluster_name=cluster_name,
        cluster_arn=getattr(ref, "arn", None),
        install_pod_identity_agent=not gke and plan.cluster.create and not plan.cluster.cluster_autoscaler,
        subnets=sorted(getattr(ref, "subnets", {}).values()),
        security_group=getattr(ref, "cluster_security_group_id", None),
        opts=pulumi.ResourceOptions(
            providers=[cloud_provider] if cloud_provider is not None else None, depends_on=[cluster]
        ),
    )
    by_pool = {p.name: p for p in plan.spec.node_pools}
    ready = {s.name: ready_timeout_s(plan.cloud, by_pool[s.pool], s) for s in serving.services}
    pools = {s.name: [node_pools[s.pool]] for s in serving.services if node_pools and s.pool in node_pools}
    Serving(
        "serving",
        objects,
        lws=any(s.nodes_per_replica > 1 for s in serving.services),
        after=[cluster, *after, identity],
        inference_crd_managed=gke,
        workload_after=pools,
        ready_timeout_s=ready,
        opts=pulumi.ResourceOptions(providers=[k8s_provider]),
    )
