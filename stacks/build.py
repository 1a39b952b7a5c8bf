"""Compose the components a StackSpec asks for. The only place that knows which cloud gets which component."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi

from catalog import Catalog, Cloud
from stacks.build_scheduling import build_kubeflow_path
from stacks.build_slurm import build_slurm_path
from stacks.facts import PoolFacts, pool_facts
from stacks.spec import ClusterMode, StackSpec


@dataclass
class BuiltStack:
    cluster_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    pools: dict[str, PoolFacts]


def build_stack(spec: StackSpec, cat: Catalog) -> BuiltStack:
    if spec.cloud == Cloud.GCP:
        return _build_gke(spec, cat)
    return _build_eks(spec, cat)


def _build_gke(spec: StackSpec, cat: Catalog) -> BuiltStack:
    import pulumi_gcp as gcp

    from components.gke_cluster import GkeCluster
    from components.gke_gpu_node_pool import GkeGpuNodePool

    provider = gcp.Provider("gcp", project=spec.project, region=spec.region,
                            default_labels={**spec.labels, "managed-by": "gpu-cluster"})
    opts = pulumi.ResourceOptions(providers=[provider])
    cluster = GkeCluster(spec.cluster.name, spec.cluster, spec.project or "", spec.region, spec.labels, opts=opts)
    pools = {}
    for pool in spec.node_pools:
        facts = pool_facts(spec, pool, cat)
        GkeGpuNodePool(pool.name, pool, facts, cluster.ref, spec.labels,
                       gpu_driver_version=facts.resolved_runtime.gke_driver_installation, opts=opts)
        pools[pool.name] = facts
    _build_gpu_runtime(spec, pools, cluster, cluster.ref.k8s_provider)
    build_kubeflow_path(spec, pools, cluster, cluster.ref.k8s_provider)
    build_slurm_path(spec, pools, cluster, cluster.ref.k8s_provider)
    return BuiltStack(cluster_name=cluster.name, kubeconfig=cluster.kubeconfig, pools=pools)


def _build_eks(spec: StackSpec, cat: Catalog) -> BuiltStack:
    import pulumi_aws as aws

    from components.eks_cluster import EksCluster
    from components.eks_gpu_node_group import EksGpuNodeGroup

    provider = aws.Provider("aws", region=spec.region,
                            allowed_account_ids=[spec.account_id] if spec.account_id else None,
                            default_tags={"tags": {**spec.labels, "managed-by": "gpu-cluster"}})
    opts = pulumi.ResourceOptions(providers=[provider])
    cluster = EksCluster(spec.cluster.name, spec.cluster, spec.region, spec.labels, opts=opts)
    pools = {}
    for pool in spec.node_pools:
        facts = pool_facts(spec, pool, cat)
        EksGpuNodeGroup(pool.name, pool, facts, cluster.ref, spec.labels, opts=opts)
        pools[pool.name] = facts
    assert cluster.ref.k8s_provider is not None  # EksCluster always sets it (the field is optional for other refs)
    if spec.cluster.cluster_autoscaler:  # EKS node groups scale only when something in the cluster resizes them
        from components.cluster_autoscaler import ClusterAutoscaler

        ClusterAutoscaler("cluster-autoscaler", cluster.ref, spec.cluster.mode == ClusterMode.CREATE, spec.labels,
                          after=[cluster], opts=pulumi.ResourceOptions(providers=[provider, cluster.ref.k8s_provider],
                                                                       depends_on=[cluster]))
    _build_gpu_runtime(spec, pools, cluster, cluster.ref.k8s_provider)
    build_kubeflow_path(spec, pools, cluster, cluster.ref.k8s_provider)
    build_slurm_path(spec, pools, cluster, cluster.ref.k8s_provider)
    return BuiltStack(cluster_name=cluster.name, kubeconfig=cluster.kubeconfig, pools=pools)


def _build_gpu_runtime(spec: StackSpec, pools: dict[str, PoolFacts], cluster: pulumi.Resource, k8s_provider) -> None:
    """Device plugin / GPU Operator / COS driver installer, and the EFA plugin on EKS: only what the pools need."""
    from components.aws_efa_device_plugin import AwsEfaDevicePlugin
    from components.nvidia_gpu_runtime import NvidiaGpuRuntime
    from stacks.gpu_runtime_plan import runtime_plan

    plan = runtime_plan(spec, list(pools.values()))
    # after the cluster (and its system pool, where the operator runs); through the cluster's Kubernetes provider
    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    if plan.device_plugin_pools or plan.operator_pools or plan.cos_driver_installer:
        NvidiaGpuRuntime("gpu-runtime", plan, opts=opts)
    if plan.efa_pools:
        AwsEfaDevicePlugin("efa-device-plugin", plan, opts=opts)


def pool_exports(pools: dict[str, PoolFacts]) -> dict:
    """Derived facts per pool, as stack outputs for scripts and dashboards."""
    return {name: {"machineType": f.machine.machine_type, "gpuModel": f.machine.gpu_model.value,
                   "gpusPerNode": f.gpus_per_node, "minNodes": f.min_nodes, "maxNodes": f.max_nodes,
                   "maxGpus": f.max_gpus, "capacity": f.capacity.value, "zones": list(f.zones),
                   "poolLabel": f.pool_label, "tolerations": f.tolerations,
                   "usdPerGpuHour": round(f.usd_per_gpu_hour, 4),
                   "gpuRuntime": f.resolved_runtime.as_dict()} for name, f in pools.items()}
