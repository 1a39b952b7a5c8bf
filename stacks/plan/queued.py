"""Queued provisioning: which pools get their nodes only through ProvisioningRequests, with which class, and the
GKE flex-start limits. Pure derived facts (no Pulumi), read by validation, the node pool components and the Kueue
renderer.

Facts and their sources:

- GKE flex-start (Dynamic Workload Scheduler) provisions GPU VMs "for up to seven days"; a ProvisioningRequest's
  ``maxRunDurationSeconds`` defaults to seven days (GKE "About flex-start provisioning mode", concepts/dws).
- GKE "flex-start with queued provisioning": the node pool is created with ``--flex-start`` and
  ``--enable-queued-provisioning``; nodes then come only through ProvisioningRequests of class
  ``queued-provisioning.gke.io``, which Kueue creates (GKE how-to/provisioningrequest; NodePool.QueuedProvisioning:
  "nodes can be only obtained through queuing via the Cluster Autoscaler ProvisioningRequest API").
- Such node pools need autoscaling from 0 nodes, reservation affinity NO_RESERVATION, no compact placement for GPUs,
  and auto-repair off on flex-start; GKE taints and labels their nodes ``cloud.google.com/gke-queued``
  (GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool preconditions and docs/gke-consumption-options.md).
- The Cluster Autoscaler serves the class ``best-effort-atomic-scale-up.autoscaling.x-k8s.io`` from 1.30.2 with
  ``--enable-provisioning-requests=true`` and ``--kube-api-content-type application/json`` (cluster-autoscaler FAQ,
  "How can I use ProvisioningRequest to run batch workloads").
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog import CapacityType, Cloud
from stacks.spec.stack import NodePool

GKE_QUEUED_CLASS = "queued-provisioning.gke.io"
ATOMIC_SCALE_UP_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
PROVISIONING_CLASS = {Cloud.GCP: GKE_QUEUED_CLASS, Cloud.AWS: ATOMIC_SCALE_UP_CLASS}
FLEX_START_MAX_RUN_HOURS = 168
"""GKE runs a flex-start node for at most seven days."""
GKE_QUEUED_TAINT_KEY = "cloud.google.com/gke-queued"
"""GKE taints every node of a queued-provisioning pool with this key (NoSchedule)."""
QUEUED_TAG = "gpu-cluster/queued-provisioning"
"""EKS node group tag naming the provisioning class, so policies can tell a queued node group from another."""
CA_PROVISIONING_ARGS = {"enable-provisioning-requests": True, "kube-api-content-type": "application/json"}
"""Cluster Autoscaler flags that turn ProvisioningRequest support on (its FAQ)."""


@dataclass(frozen=True)
class QueuedPlan:
    provisioning_class: str
    """ProvisioningRequest class the pool's AdmissionCheck asks for."""
    max_run_seconds: int | None
    """GKE flex-start: how long a node may run (the ProvisioningRequest's ``maxRunDurationSeconds``); else None."""


def is_flex_start(pool: NodePool) -> bool:
    return pool.capacity.type == CapacityType.FLEX_START


def is_queued(pool: NodePool) -> bool:
    """``capacity.queuedProvisioning``, defaulting to true on flex-start pools."""
    queued = pool.capacity.queued_provisioning
    return is_flex_start(pool) if queued is None else queued


def max_run_hours(pool: NodePool) -> int | None:
    """A flex-start node's maximum run time in hours (GKE's maximum when omitted); None elsewhere."""
    if not is_flex_start(pool):
        return None
    return pool.capacity.max_run_hours or FLEX_START_MAX_RUN_HOURS


def queued_plan(cloud: Cloud, pool: NodePool) -> QueuedPlan | None:
    """How a queued pool gets its nodes; None for pools that scale on pending pods alone."""
    if not is_queued(pool):
        return None
    hours = max_run_hours(pool)
    return QueuedPlan(PROVISIONING_CLASS[cloud], hours * 3600 if hours is not None else None)


def max_run_duration(pool: NodePool) -> str | None:
    """GKE node pool ``maxRunDuration`` (``"604800s"``) of a flex-start pool; None elsewhere."""
    hours = max_run_hours(pool)
    return None if hours is None else f"{hours * 3600}s"
