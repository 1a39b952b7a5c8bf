"""One GPU pool: name, node range, upgrade settings, node labels and taints; then the catalog and capacity rules.

Every problem is reported through the pool's scope, so each message names the pool (``pool 'h100': …``).
"""

from __future__ import annotations

from catalog import CapacityType, Catalog, Cloud
from stacks.spec.cluster import ClusterSpec
from stacks.spec.stack import GPU_TAINT_KEY, POOL_LABEL_KEY, NodePool
from stacks.validate.issues import Issues
from stacks.validate.names import DNS_LABEL, LABEL_KEY_RULE, valid_label_key, valid_label_value
from stacks.validate.pool_capacity import check_capacity, check_multi_node
from stacks.validate.nvlink import check_capacity_fields, check_rack_scale
from stacks.validate.pool_catalog import check_machine, check_price
from stacks.validate.pool_zones import check_zones
from stacks.validate.queued import check_queued

POOL_NAME_MAX = 32
"""Pulumi auto-naming appends '-' + 7 characters; GKE node pool names stop at 40."""
EKS_MAX_UNAVAILABLE = 100
"""EKS NodegroupUpdateConfig.maxUnavailable: 1 … 100 (EKS API reference)."""
GKE_MAX_NODES_PER_POOL_ZONE = 1000
"""GKE limit "Nodes per node pool zone: 1,000" (cloud.google.com/kubernetes-engine/quotas, Limits per cluster; not
adjustable). ``maxNodes`` is the total over the pool's zones (``total_max_node_count``)."""
EKS_MAX_NODES_PER_NODE_GROUP = 450
"""EKS service quota "Nodes per managed node group: 450", adjustable (docs.aws.amazon.com/eks/latest/userguide/
service-quotas.html): above it the node group cannot scale, unless the account's quota was raised."""
RESERVED_LABEL_PREFIXES = ("kubernetes.io/", "k8s.io/", "cloud.google.com/", "eks.amazonaws.com/", "gpu-cluster/")


def check_pool(
    issues: Issues, cat: Catalog, cloud: Cloud, region: str | None, cluster: ClusterSpec | None, i: int, pool: NodePool
) -> None:
    """Every rule of ``nodePools[i]``; ``region`` is None when it is unknown (reported once, at the region)."""
    scope = issues.pool(i, pool.name)
    if len(pool.name) > POOL_NAME_MAX or not DNS_LABEL.fullmatch(pool.name):
        scope.error(
            "name",
            "not a valid pool name",
            pool.name,
            allowed=f"lower-case letters, digits and '-', starting with a letter, at most {POOL_NAME_MAX} characters",
            fix="rename the pool, e.g. 'h100-train'",
        )
    if pool.min_nodes > pool.max_nodes:
        scope.error(
            "minNodes",
            "minNodes is larger than maxNodes",
            pool.min_nodes,
            allowed=f"0 … {pool.max_nodes} (maxNodes)",
            fix="lower minNodes or raise maxNodes",
        )
    _check_node_limit(scope, cloud, pool)
    if pool.upgrade.max_surge == 0 and pool.upgrade.max_unavailable == 0:
        scope.error(
            "upgrade",
            "an upgrade with maxSurge 0 and maxUnavailable 0 can never progress",
            {"maxSurge": 0, "maxUnavailable": 0},
            allowed="at least one of them > 0",
            fix="use maxSurge: 0, maxUnavailable: 1 (no spare GPUs needed)",
        )
    if cloud == Cloud.AWS:
        _check_eks_upgrade(scope.at("upgrade"), pool)
    _check_node_labels(scope.at("labels"), pool.labels)
    _check_taints(scope.at("taints"), pool)
    check_capacity(scope, cloud, pool, rack_scale=(cloud, pool.machine_type) in cat.nvlink_domains)
    check_capacity_fields(scope, cat, cloud, pool)
    check_queued(scope, cloud, pool, cluster)
    machine = check_machine(scope, cat, cloud, i, pool)
    if machine is not None:
        check_rack_scale(scope, cat, cloud, cluster, pool, machine)
    if region is not None:
        check_zones(scope, cat, cloud, region, cluster, pool, machine)
        if machine is not None:
            check_price(scope, cat, cloud, region, pool, machine)
    if pool.multi_node:
        check_multi_node(scope, cloud, pool, machine)


def _check_node_limit(scope: Issues, cloud: Cloud, pool: NodePool) -> None:
    """maxNodes within what the cloud lets one node pool (GKE) or managed node group (EKS) hold."""
    if cloud == Cloud.GCP:
        zones = len(set(pool.zones))
        limit = GKE_MAX_NODES_PER_POOL_ZONE * zones
        if pool.max_nodes > limit:
            scope.error(
                "maxNodes",
                f"GKE allows at most {GKE_MAX_NODES_PER_POOL_ZONE:,} nodes per node pool in each "
                f"zone, so {limit:,} in this pool's {zones} zone{'s' if zones != 1 else ''}",
                pool.max_nodes,
                allowed=f"1 … {limit}",
                fix="lower maxNodes, add zones, or split the pool into several pools",
            )
    elif pool.max_nodes > EKS_MAX_NODES_PER_NODE_GROUP:
        scope.warn(
            "maxNodes",
            f"above EKS's default quota of {EKS_MAX_NODES_PER_NODE_GROUP} nodes per managed node "
            "group: the group stops scaling there unless the quota was raised",
            pool.max_nodes,
            allowed=f"1 … {EKS_MAX_NODES_PER_NODE_GROUP} (or your raised quota)",
            fix="request a higher 'Nodes per managed node group' in Service Quotas (Amazon EKS), or split the "
            "pool into several pools",
        )


def _check_node_labels(labels: Issues, values: dict[str, str]) -> None:
    """Kubernetes label syntax; the pool label and the cloud's own prefixes are gpu-cluster's and the cloud's."""
    for key, value in values.items():
        if not valid_label_key(key):
            labels.error(
                key, "not a valid Kubernetes label key", key, allowed=LABEL_KEY_RULE, fix="rename the label key"
            )
        elif key == POOL_LABEL_KEY or key.startswith(RESERVED_LABEL_PREFIXES):
            labels.error(
                key,
                "label key is reserved",
                key,
                allowed=f"any key outside {', '.join(RESERVED_LABEL_PREFIXES)}",
                fix=f"drop it: gpu-cluster sets {POOL_LABEL_KEY} itself, and the cloud owns its prefixes",
            )
        if not valid_label_value(str(value)):
            labels.error(
                key,
                "not a valid Kubernetes label value",
                value,
                allowed="≤ 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric",
                fix="shorten or simplify the value",
            )


def _check_taints(taints: Issues, pool: NodePool) -> None:
    seen = set()
    for j, taint in enumerate(pool.taints):
        if taint.key == GPU_TAINT_KEY:
            taints.error(
                (j, "key"),
                "the GPU taint is already set on every GPU pool",
                taint.key,
                allowed=f"any key except {GPU_TAINT_KEY}",
                fix="remove this taint",
            )
        elif not valid_label_key(taint.key):
            taints.error(
                (j, "key"),
                "not a valid Kubernetes taint key",
                taint.key,
                allowed=LABEL_KEY_RULE,
                fix="rename the taint key, e.g. 'dedicated'",
            )
        if not valid_label_value(taint.value):
            taints.error(
                (j, "value"),
                "not a valid Kubernetes taint value",
                taint.value,
                allowed="≤ 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric (or empty)",
                fix="shorten or simplify the value",
            )
        if (taint.key, taint.effect) in seen:
            taints.error(
                j, "duplicate taint", taint.key, allowed="one taint per key and effect", fix="remove the duplicate"
            )
        seen.add((taint.key, taint.effect))


def _check_eks_upgrade(upgrade: Issues, pool: NodePool) -> None:
    """EKS managed node groups have no surge count: updateConfig has maxUnavailable (1-100) and an update strategy,
    DEFAULT (new nodes first: the ASG grows by the larger of 2 × its Availability Zones and maxUnavailable) or
    MINIMAL (old nodes terminated first, for scarce GPUs). gpu-cluster maps maxSurge 0 to MINIMAL and maxSurge > 0
    to DEFAULT (EKS API NodegroupUpdateConfig; EKS user guide "Understand each phase of node updates")."""
    up = pool.upgrade
    if up.max_unavailable == 0 and up.max_surge > 0:  # both 0 is reported by check_pool for every cloud
        upgrade.error(
            "maxUnavailable",
            "EKS managed node groups update at least one node at a time; maxUnavailable 0 is not accepted",
            0,
            allowed=f"1 … {EKS_MAX_UNAVAILABLE}",
            fix="set maxUnavailable: 1 (EKS has no surge count to keep every node available)",
        )
    elif up.max_unavailable > EKS_MAX_UNAVAILABLE:
        upgrade.error(
            "maxUnavailable",
            f"EKS updates at most {EKS_MAX_UNAVAILABLE} nodes at once",
            up.max_unavailable,
            allowed=f"1 … {EKS_MAX_UNAVAILABLE}",
            fix=f"set maxUnavailable: {EKS_MAX_UNAVAILABLE} or less",
        )
    if up.max_surge > 0:
        zones = len(set(pool.zones))
        launched = max(2 * zones, up.max_unavailable)
        reservation = (
            "; a reservation without that many spare nodes blocks the update"
            if pool.capacity.type == CapacityType.RESERVATION
            else ""
        )
        upgrade.warn(
            "maxSurge",
            f"EKS managed node groups have no surge count: maxSurge > 0 selects the DEFAULT "
            f"update strategy, which launches up to {launched} new nodes (the larger of 2 × {zones} "
            f"Availability Zone{'s' if zones != 1 else ''} and maxUnavailable) before terminating old ones"
            f"{reservation}",
            up.max_surge,
            allowed="0 (update strategy MINIMAL: old nodes are terminated before new ones launch)",
            fix="use maxSurge: 0 on GPU pools (no spare GPUs needed), or keep it to accept EKS's surge",
        )
