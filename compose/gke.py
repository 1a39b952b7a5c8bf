"""GKE: provider, cluster, one GkeGpuNodePool per pool, then the shared layers."""
from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from catalog import Catalog, Cloud
from components.gke.cluster import GkeCluster
from components.gke.fabric import GkeFabric, fabric_kinds
from components.gke.gpu_node_pool import GkeGpuNodePool
from components.gke.image_sources import GkeImageSources
from compose.admission import build_admission
from compose.built import BuiltCluster
from compose.layers import build_cluster_layers
from plan.facts import pool_facts
from plan.maintenance import maintenance_policy
from plan.pod_start import pod_start_plan
from spec.stack import StackSpec


def build_gke(spec: StackSpec, cat: Catalog) -> BuiltCluster:
    provider = gcp.Provider("gcp", project=spec.project, region=spec.region,
                            default_labels={**spec.labels, "managed-by": "gpu-cluster"})
    opts = pulumi.ResourceOptions(providers=[provider])
    pools = {pool.name: pool_facts(spec, pool, cat) for pool in spec.node_pools}
    fabric_pools = [f for f in pools.values() if fabric_kinds([f])]
    cluster = GkeCluster(spec.cluster.name, spec.cluster, spec.project or "", spec.region, spec.labels,
                         region_zones=cat.zones(Cloud.GCP, spec.region), multi_networking=bool(fabric_pools),
                         maintenance_policy=maintenance_policy(spec), opts=opts)
    networks: dict[str, dict] = {}
    # the admission policies exist before the namespaces and the device injector they guard
    admission = build_admission(spec, pools, cluster, cluster.ref.k8s_provider)
    if fabric_pools:
        fabric = GkeFabric("fabric", fabric_pools, spec.cluster.name, spec.project or "", spec.region,
                           after=[cluster, *admission], opts=pulumi.ResourceOptions(
                               providers=[provider, cluster.ref.k8s_provider]))
        networks = fabric.node_network_configs
    streaming = {p.name for p in spec.node_pools if pod_start_plan(spec.cloud, p).streaming}
    sources = GkeImageSources("images", spec.project or "", spec.region, bool(streaming), spec.cluster.image_mirrors,
                              spec.labels, opts=opts) if streaming or spec.cluster.image_mirrors else None
    for pool in spec.node_pools:
        facts = pools[pool.name]
        api = sources.streaming_api if sources is not None and pool.name in streaming else None
        GkeGpuNodePool(pool.name, pool, facts, cluster.ref, spec.labels,
                       gpu_driver_version=facts.resolved_runtime.gke_driver_installation,
                       network_config=networks.get(pool.name), after=[api] if api is not None else [], opts=opts)
    fleet = build_cluster_layers(spec, pools, cluster, cluster.ref.k8s_provider, kueue_after=admission)
    return BuiltCluster(cluster_name=cluster.name, kubeconfig=cluster.kubeconfig, pools=pools,
                        fleet_outputs=fleet.outputs)
