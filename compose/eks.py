"""EKS: provider, cluster, one EksGpuNodeGroup per pool, the Cluster Autoscaler, then the shared layers."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.eks.cluster import EksCluster
from components.eks.cluster_autoscaler import ClusterAutoscaler
from components.eks.gpu_node_group import EksGpuNodeGroup
from components.eks.node_monitoring import EksNodeMonitoring
from compose.admission import build_admission
from compose.built import BuiltCluster
from compose.fleet import admitted_manager_egress
from compose.layers import build_cluster_layers
from stacks.plan.stack import StackPlan


def build_eks(plan: StackPlan, account_id_secret: bool = False) -> BuiltCluster:
    spec, c = plan.spec, plan.cluster
    account: pulumi.Input[str] | None = spec.account_id
    if spec.account_id and account_id_secret:
        account = pulumi.Output.secret(spec.account_id)  # set with --secret: it stays encrypted in state and previews
    provider = aws.Provider(
        "aws",
        region=spec.region,
        allowed_account_ids=[account] if spec.account_id else None,
        default_tags={"tags": {**spec.labels, "managed-by": "gpu-cluster"}},
    )
    opts = pulumi.ResourceOptions(providers=[provider])
    cluster = EksCluster(c.name, c, admitted_egress=admitted_manager_egress(plan), opts=opts)
    node_pools: dict[str, pulumi.Resource] = {
        name: EksGpuNodeGroup(name, pool, cluster.ref, opts=opts) for name, pool in plan.pools.items()
    }
    if c.create:  # node repair is on for every GPU group: the agent reports GPU faults
        EksNodeMonitoring(
            "node-monitoring",
            cluster.ref,
            spec.labels,
            opts=pulumi.ResourceOptions(providers=[provider], depends_on=[cluster]),
        )
    assert cluster.ref.k8s_provider is not None  # EksCluster always sets it (the field is optional for other refs)
    queued = any(f.queued is not None for f in plan.facts)
    kueue_after: list[pulumi.Resource] = build_admission(plan, cluster, cluster.ref.k8s_provider)
    if c.cluster_autoscaler:  # EKS node groups scale only when something in the cluster resizes them
        autoscaler = ClusterAutoscaler(
            "cluster-autoscaler",
            cluster.ref,
            c.create,
            spec.labels,
            after=[cluster],
            provisioning_requests=queued,
            opts=pulumi.ResourceOptions(providers=[provider, cluster.ref.k8s_provider], depends_on=[cluster]),
        )
        if autoscaler.provisioning_request_crd is not None:  # Kueue checks for the CRD when it starts
            kueue_after.append(autoscaler.provisioning_request_crd)
    fleet = build_cluster_layers(
        plan,
        cluster,
        cluster.ref.k8s_provider,
        kueue_after=kueue_after,
        cloud_provider=provider,
        cluster_name=cluster.name,
        node_pools=node_pools,
    )
    return BuiltCluster(
        cluster_name=cluster.name,
        kubeconfig=cluster.kubeconfig,
        pools={name: p.facts for name, p in plan.pools.items()},
        fleet_outputs=fleet.outputs,
    )
