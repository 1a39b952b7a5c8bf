"""EKS: provider, cluster, one EksGpuNodeGroup per pool, the Cluster Autoscaler, then the shared layers."""
from __future__ import annotations

import datetime as dt

import pulumi
import pulumi_aws as aws

from catalog import Catalog
from components.eks.cluster_autoscaler import ClusterAutoscaler
from components.eks.cluster import EksCluster
from components.eks.gpu_node_group import EksGpuNodeGroup
from components.eks.node_monitoring import EksNodeMonitoring
from compose.built import BuiltCluster
from compose.layers import build_cluster_layers
from plan.capacity_block import block_schedule
from plan.facts import pool_facts
from spec.stack import ClusterMode, StackSpec


def build_eks(spec: StackSpec, cat: Catalog, account_id_secret: bool = False) -> BuiltCluster:
    account: pulumi.Input[str] | None = spec.account_id
    if spec.account_id and account_id_secret:
        account = pulumi.Output.secret(spec.account_id)  # set with --secret: it stays encrypted in state and previews
    provider = aws.Provider("aws", region=spec.region,
                            allowed_account_ids=[account] if spec.account_id else None,
                            default_tags={"tags": {**spec.labels, "managed-by": "gpu-cluster"}})
    opts = pulumi.ResourceOptions(providers=[provider])
    cluster = EksCluster(spec.cluster.name, spec.cluster, spec.region, spec.labels, opts=opts)
    pools = {}
    now = dt.datetime.now(dt.timezone.utc)  # a capacity block's actions already past are not created
    for pool in spec.node_pools:
        facts = pool_facts(spec, pool, cat)
        EksGpuNodeGroup(pool.name, pool, facts, cluster.ref, spec.labels, schedule=block_schedule(pool, now), opts=opts)
        pools[pool.name] = facts
    if spec.cluster.mode == ClusterMode.CREATE:  # node repair is on for every GPU group: the agent reports GPU faults
        EksNodeMonitoring("node-monitoring", cluster.ref, spec.labels,
                          opts=pulumi.ResourceOptions(providers=[provider], depends_on=[cluster]))
    assert cluster.ref.k8s_provider is not None  # EksCluster always sets it (the field is optional for other refs)
    queued = any(f.queued is not None for f in pools.values())
    kueue_after: list[pulumi.Resource] = []
    if spec.cluster.cluster_autoscaler:  # EKS node groups scale only when something in the cluster resizes them
        autoscaler = ClusterAutoscaler(
            "cluster-autoscaler", cluster.ref, spec.cluster.mode == ClusterMode.CREATE, spec.labels, after=[cluster],
            provisioning_requests=queued, opts=pulumi.ResourceOptions(
                providers=[provider, cluster.ref.k8s_provider], depends_on=[cluster]))
        if autoscaler.provisioning_request_crd is not None:  # Kueue checks for the CRD when it starts
            kueue_after.append(autoscaler.provisioning_request_crd)
    fleet = build_cluster_layers(spec, pools, cluster, cluster.ref.k8s_provider, kueue_after=kueue_after)
    return BuiltCluster(cluster_name=cluster.name, kubeconfig=cluster.kubeconfig, pools=pools,
                        fleet_outputs=fleet.outputs)
