"""Flex-start and queued provisioning of one pool: where they exist, the node-pool shape GKE requires, the limits.

``pool`` is the pool's scope (``issues.pool(i, name)``), so every message names the pool. Facts and sources are in
``stacks/plan/queued.py``.
"""

from __future__ import annotations

from catalog import CapacityType, Cloud
from stacks.plan.queued import FLEX_START_MAX_RUN_HOURS, is_flex_start, is_queued
from stacks.spec.cluster import ClusterSpec
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues


def check_queued(pool: Issues, cloud: Cloud, spec: NodePool, cluster: ClusterSpec | None) -> None:
    cap, capacity = spec.capacity, pool.at("capacity")
    flex = is_flex_start(spec)
    if flex and cloud == Cloud.AWS:
        capacity.error(
            "type",
            "flex-start is GKE's Dynamic Workload Scheduler; EKS has no such capacity type",
            cap.type.value,
            allowed="on-demand, spot or reservation",
            fix="use capacity.type: on-demand with queuedProvisioning: true (all-or-nothing scale-ups by "
            "the Cluster Autoscaler), or a reservation with reservationKind: capacity-block",
        )
    if cap.max_run_hours is not None and not flex:
        capacity.error(
            "maxRunHours",
            "maxRunHours limits flex-start nodes only",
            cap.max_run_hours,
            allowed="capacity.type: flex-start",
            fix="remove capacity.maxRunHours, or use flex-start",
        )
    elif cap.max_run_hours is not None and cap.max_run_hours > FLEX_START_MAX_RUN_HOURS:
        capacity.error(
            "maxRunHours",
            "GKE runs a flex-start node for at most seven days",
            cap.max_run_hours,
            allowed=f"1 … {FLEX_START_MAX_RUN_HOURS}",
            fix=f"use at most {FLEX_START_MAX_RUN_HOURS}; checkpoint jobs that run longer",
        )
    queued = is_queued(spec)
    if queued and cloud == Cloud.GCP and not flex:
        capacity.error(
            "queuedProvisioning",
            "GKE's queued provisioning runs on flex-start (DWS) capacity",
            True,
            allowed=f"capacity.type: flex-start (now {cap.type.value})",
            fix="set capacity.type: flex-start, or remove queuedProvisioning",
        )
    if queued and cloud == Cloud.AWS and cap.type == CapacityType.RESERVATION:
        capacity.error(
            "queuedProvisioning",
            "a reservation's nodes are bought already; an all-or-nothing scale-up adds nothing",
            True,
            allowed="on-demand or spot node groups",
            fix="remove queuedProvisioning from the reservation pool",
        )
    if queued and cloud == Cloud.AWS and cluster is not None and not cluster.cluster_autoscaler:
        capacity.error(
            "queuedProvisioning",
            "nothing serves the ProvisioningRequests: the stack installs no Cluster "
            "Autoscaler (cluster.clusterAutoscaler: false)",
            True,
            allowed="cluster.clusterAutoscaler: true",
            fix="set cluster.clusterAutoscaler: true, or remove queuedProvisioning",
        )
    if (flex or queued) and spec.min_nodes > 0:
        what = "flex-start" if flex else "queued-provisioning"
        pool.error(
            "minNodes",
            f"a {what} pool starts at 0 nodes: nodes come for admitted work and go with it "
            "(GKE creates such pools with 0 nodes)",
            spec.min_nodes,
            allowed="0",
            fix="set minNodes: 0 (use an on-demand or reservation pool for nodes that must always run)",
        )


def check_queued_without_kueue(issues: Issues, pools: list[tuple[int, NodePool]]) -> None:
    """A stack without a scheduling section installs no Kueue, so nothing creates the ProvisioningRequests a queued
    pool gets its nodes through (queued provisioning is the default on GKE flex-start): its nodes would never come."""
    for i, pool in pools:
        if not is_queued(pool):
            continue
        how = "the default on flex-start pools" if pool.capacity.queued_provisioning is None else "set here"
        issues.pool(i, pool.name).at("capacity").error(
            "queuedProvisioning",
            f"the pool gets nodes only through ProvisioningRequests (queued provisioning, {how}), "
            "which Kueue creates, and this stack installs no Kueue (no gpu-cluster:scheduling)",
            pool.capacity.queued_provisioning if pool.capacity.queued_provisioning is not None else True,
            allowed="gpu-cluster:scheduling with workload: kubeflow, or queuedProvisioning: false",
            fix="add gpu-cluster:scheduling (workload: kubeflow) with a queue that has quota on this pool, or set "
            "capacity.queuedProvisioning: false (the autoscaler then adds flex-start nodes for pending pods)",
        )
