"""GKE: provider, cluster, one GkeGpuNodePool per pool, then the shared layers."""
from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from catalog import Catalog, Cloud
from components.gke_cluster import GkeCluster
from components.gke_gpu_node_pool import GkeGpuNodePool
from compose.built import BuiltCluster
from compose.layers import build_cluster_layers
from stacks.facts import pool_facts
from stacks.spec import StackSpec


def build_gke(spec: StackSpec, cat: Catalog) -> BuiltCluster:
    provider = gcp.Provider("gcp", project=spec.project, region=spec.region,
                            default_labels={**spec.labels, "managed-by": "gpu-cluster"})
    opts = pulumi.ResourceOptions(providers=[provider])
    cluster = GkeCluster(spec.cluster.name, spec.cluster, spec.project or "", spec.region, spec.labels,
                         region_zones=cat.zones(Cloud.GCP, spec.region), opts=opts)
    pools = {}
    for pool in spec.node_pools:
        facts = pool_facts(spec, pool, cat)
        GkeGpuNodePool(pool.name, pool, facts, cluster.ref, spec.labels,
                       gpu_driver_version=facts.resolved_runtime.gke_driver_installation, opts=opts)
        pools[pool.name] = facts
    build_cluster_layers(spec, pools, cluster, cluster.ref.k8s_provider)
    return BuiltCluster(cluster_name=cluster.name, kubeconfig=cluster.kubeconfig, pools=pools)
