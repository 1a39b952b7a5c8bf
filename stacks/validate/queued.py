"""Flex-start and queued provisioning of one pool: where they exist, the node-pool shape GKE requires, the limits.

``pool`` is the pool's scope (``issues.pool(i, name)``), so every message names the pool. Facts and sources are in
``stacks/plan/queued.py``.
"""
from __future__ import annotations

from catalog import CapacityType, Cloud
from stacks.plan.queued import FLEX_START_MAX_RUN_HOURS, is_flex_start, is_queued
from stacks.spec.stack import ClusterSpec, NodePool
from stacks.validate.issues import Issues


def check_queued(pool: Issues, cloud: Cloud, spec: NodePool, cluster: ClusterSpec | None) -> None:
    cap, capacity = spec.capacity, pool.at("capacity")
    flex = is_flex_start(spec)
    if flex and cloud == Cloud.AWS:
        capacity.error("type", "flex-start is GKE's Dynamic Workload Scheduler; EKS has no such capacity type",
                       cap.type.value, allowed="on-demand, spot or reservation",
                       fix="use capacity.type: on-demand with queuedProvisioning: true (all-or-nothing scale-ups by "
                       "the Cluster Autoscaler), or a reservation with reservationKind: capacity-block")
    if cap.max_run_hours is not None and not flex:
        capacity.error("maxRunHours", "maxRunHours limits flex-start nodes only", cap.max_run_hours,
                       allowed="capacity.type: flex-start", fix="remove capacity.maxRunHours, or use flex-start")
    elif cap.max_run_hours is not None and cap.max_run_hours > FLEX_START_MAX_RUN_HOURS:
        capacity.error("maxRunHours", "GKE runs a flex-start node for at most seven days", cap.max_run_hours,
                       allowed=f"1 … {FLEX_START_MAX_RUN_HOURS}",
                       fix=f"use at most {FLEX_START_MAX_RUN_HOURS}; checkpoint jobs that run longer")
    queued = is_queued(spec)
    if queued and cloud == Cloud.GCP and not flex:
        capacity.error("queuedProvisioning", "GKE's queued provisioning runs on flex-start (DWS) capacity",
                       True, allowed=f"capacity.type: flex-start (now {cap.type.value})",
                       fix="set capacity.type: flex-start, or remove queuedProvisioning")
    if queued and cloud == Cloud.AWS and cap.type == CapacityType.RESERVATION:
        capacity.error("queuedProvisioning", "a reservation's nodes are bought already; an all-or-nothing scale-up "
                       "adds nothing", True, allowed="on-demand or spot node groups",
                       fix="remove queuedProvisioning from the reservation pool")
    if queued and cloud == Cloud.AWS and cluster is not None and not cluster.cluster_autoscaler:
        capacity.error("queuedProvisioning", "nothing serves the ProvisioningRequests: the stack installs no Cluster "
                       "Autoscaler (cluster.clusterAutoscaler: false)", True,
                       allowed="cluster.clusterAutoscaler: true",
                       fix="set cluster.clusterAutoscaler: true, or remove queuedProvisioning")
    if (flex or queued) and spec.min_nodes > 0:
        what = "flex-start" if flex else "queued-provisioning"
        pool.error("minNodes", f"a {what} pool starts at 0 nodes: nodes come for admitted work and go with it "
                   "(GKE creates such pools with 0 nodes)", spec.min_nodes, allowed="0",
                   fix="set minNodes: 0 (use an on-demand or reservation pool for nodes that must always run)")
