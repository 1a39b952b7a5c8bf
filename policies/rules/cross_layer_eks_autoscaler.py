"""cross-layer-eks-autoscaler: EKS GPU node groups that may grow (minSize < maxSize) have a Cluster Autoscaler in
the stack to grow them. An EKS managed node group is an Auto Scaling group whose desired size nothing changes
unless an autoscaler inside the cluster does; Karpenter launches its own nodes and never resizes node groups."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from policies.findings import Finding
from policies.pools import gpu_pools
from policies.resources import HELM_CHART_V4, HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import as_dict, as_int, as_list, dig

ID = "cross-layer-eks-autoscaler"
CHART = "cluster-autoscaler"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    pools = [v for v in gpu_pools(resources, cat) if v.cloud == Cloud.AWS]
    if not pools or any(_is_cluster_autoscaler(r) for r in resources):
        return
    for view in pools:
        low, high = as_int(dig(view.resource.props, "scalingConfig", "minSize")), view.max_nodes
        if not (isinstance(low, int) and isinstance(high, int)) or low >= high:
            continue  # a fixed-size group, or sizes unknown until deploy
        yield Finding(
            view.subject,
            f"nothing resizes this node group, so it stays at {low} "
            f"node{'s' if low != 1 else ''} and pods that need more stay Pending",
            observed=f"scalingConfig {low}–{high} nodes, and no Cluster Autoscaler release in the stack",
            required="a Cluster Autoscaler release (chart cluster-autoscaler) in the stack: EKS managed "
            "node groups do not resize themselves, and Karpenter does not resize them",
            fix="set cluster.clusterAutoscaler: true (gpu-cluster installs the Cluster Autoscaler), or "
            f"waive {ID} for this pool if the cluster's Cluster Autoscaler is installed by another stack",
            keys=view.keys,
            urn=view.resource.urn,
        )


def _is_cluster_autoscaler(r: Resource) -> bool:
    if r.type in (HELM_RELEASE, HELM_CHART_V4):
        chart = r.props.get("chart")
        return isinstance(chart, str) and chart.rstrip("/").rsplit("/", 1)[-1].startswith(CHART)
    if r.type == DEPLOYMENT:
        containers = as_list(dig(r.props, "spec", "template", "spec", "containers"))
        return any(CHART in str(as_dict(c).get("image", "")) for c in containers)
    return False


RULE = register(
    Rule(
        id=ID,
        title="EKS node groups that autoscale have a Cluster Autoscaler",
        category=Category.CROSS_LAYER,
        description="EKS GPU node groups whose minSize is below maxSize have a Cluster Autoscaler in the stack to resize "
        "them.",
        why=(
            "An EKS managed node group does not scale by itself: its Auto Scaling group keeps the desired size it was "
            "created with until an autoscaler in the cluster changes it. Without a Cluster Autoscaler a pool with "
            "minNodes 0 never gets a node, and jobs (Kueue workloads, Slurm NodeSets) wait Pending forever while the "
            "cost preview prices the pool up to maxNodes. GKE scales node pools itself; Karpenter launches its own "
            "nodes and leaves node groups alone."
        ),
        remediation=(
            "1. For a gpu-cluster stack, keep cluster.clusterAutoscaler true (the default): the stack installs "
            "the Cluster Autoscaler with an EKS Pod Identity role and tags each node group's Auto Scaling group "
            "for discovery and scale-from-zero. 2. For other programs, install the cluster-autoscaler chart "
            "with auto-discovery of the node groups' tags. 3. If another stack installs it in this cluster, "
            "waive this rule for the pools with that reason."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=("aws:eks/nodeGroup:NodeGroup", HELM_RELEASE),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3090,
)
