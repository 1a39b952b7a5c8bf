"""GKE: provider, cluster, one GkeGpuNodePool per pool, then the shared layers."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from components.gke.cluster import GkeCluster
from components.gke.fabric import GkeFabric
from components.gke.gpu_node_pool import GkeGpuNodePool
from components.gke.image_sources import GkeImageSources
from compose.admission import build_admission
from compose.built import BuiltCluster
from compose.fleet import admitted_manager_egress
from compose.layers import build_cluster_layers
from stacks.plan.stack import StackPlan


def build_gke(plan: StackPlan) -> BuiltCluster:
    spec, c = plan.spec, plan.cluster
    provider = gcp.Provider(
        "gcp", project=spec.project, region=spec.region, default_labels={**spec.labels, "managed-by": "gpu-cluster"}
    )
    opts = pulumi.ResourceOptions(providers=[provider])
    pools = {name: p.facts for name, p in plan.pools.items()}
    cluster = GkeCluster(
        c.name,
        c,
        multi_networking=bool(plan.gke_fabric),
        maintenance_policy=plan.maintenance,
        admitted_egress=admitted_manager_egress(plan),
        opts=opts,
    )
    networks: dict[str, dict] = {}
    # the admission policies exist before the namespaces and the device injector they guard
    admission = build_admission(plan, cluster, cluster.ref.k8s_provider)
    if plan.gke_fabric:
        fabric = GkeFabric(
            "fabric",
            plan.gke_fabric,
            c.name,
            c.project,
            c.region,
            after=[cluster, *admission],
            opts=pulumi.ResourceOptions(providers=[provider, cluster.ref.k8s_provider]),
        )
        networks = fabric.node_network_configs
    streaming = plan.streaming_pools
    sources = (
        GkeImageSources("images", c.project, c.region, bool(streaming), plan.mirrors, spec.labels, opts=opts)
        if streaming or plan.mirrors
        else None
    )
    node_pools: dict[str, pulumi.Resource] = {}
    for name, pool in plan.pools.items():
        api = sources.streaming_api if sources is not None and name in streaming else None
        node_pools[name] = GkeGpuNodePool(
            name,
            pool,
            cluster.ref,
            network_config=networks.get(name),
            after=[api] if api is not None else [],
            opts=opts,
        )
    fleet = build_cluster_layers(
        plan,
        cluster,
        cluster.ref.k8s_provider,
        kueue_after=admission,
        cloud_provider=provider,
        cluster_name=cluster.name,
        node_pools=node_pools,
    )
    return BuiltCluster(
        cluster_name=cluster.name, kubeconfig=cluster.kubeconfig, pools=pools, fleet_outputs=fleet.outputs
    )
