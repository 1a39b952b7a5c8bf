"""Everything a GKE GPU node pool needs, resolved from the spec pool and its facts: node config, autoscaling,
reservation affinity, placement, queued provisioning and flex-start, pod-start settings, local SSDs, fabric sysctls.
``components/gke/gpu_node_pool.py`` only wires this to ``gcp.container.NodePool``. Pure: no Pulumi."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from catalog import CapacityType
from stacks.plan.reservation import RESERVED_NODES_LABEL, reserved_nodes
from stacks.plan.fabric import GPU_TCP_SYSCTLS
from stacks.plan.facts import GPU_TAINT_VALUE, PoolFacts
from stacks.plan.node_storage import ephemeral_local_ssds
from stacks.plan.nvlink import WORKLOAD_POLICY_TYPE
from stacks.plan.pod_start import BOOT_DISK_MODE, PodStartPlan
from stacks.plan.queued import is_flex_start, is_queued, max_run_duration
from stacks.spec.stack import GPU_TAINT_KEY, NodePool

RESERVATION_KEY = "compute.googleapis.com/reservation-name"
DRANET_LABEL = {"cloud.google.com/gke-networking-dra-driver": "true"}
"""Node label with which GKE runs its managed DRANET driver on a pool with ``acceleratorNetworkProfile: auto``
(cluster-toolkit gke-node-pool: enable_dranet sets the profile and this label)."""
HYPERDISK_ONLY_PREFIXES = ("a3-", "a4-", "a4x-")
"""A3, A4 and A4X machines boot from Hyperdisk (cluster-toolkit's A4X blueprint: hyperdisk-balanced); the other GPU
families use Persistent Disk."""
SERVICE_ACCOUNT = "service_account"
"""The node-config key the component fills with its node service account (the plan keeps the key's place)."""


@dataclass(frozen=True)
class GkePoolPlan:
    node_config: dict[str, Any]
    """``node_config`` without the shared Shielded VM settings; ``service_account`` is a placeholder (None)."""
    node_locations: list[str]
    initial_node_count: int
    autoscaling: dict[str, Any]
    management: dict[str, Any]
    upgrade_settings: dict[str, Any]
    placement_policy: dict[str, Any] | None
    """Compact placement; with ``workload_policy`` the component names the policy it creates instead."""
    workload_policy: dict[str, Any] | None
    """A4X (GB200 NVL72): the Compute Engine workload policy placing nodes in whole NVLink domains, else None."""
    queued_provisioning: dict[str, Any] | None
    delete_before_replace: bool
    """A replacement pool cannot get nodes while the old one holds an exact-size reservation: delete first."""
    racks: int = 1
    """GKE node pools the spec pool becomes: one per rack under a workload policy (GKE gives each such node pool one
    18-node sub-block), each with ``initial_node_count`` and ``autoscaling`` already divided per rack."""

    def rack_names(self, name: str) -> list[str]:
        """``gb200`` for one rack; ``gb200-rack-0`` … for several (the Pulumi names of the rack node pools)."""
        return [name] if self.racks == 1 else [f"{name}-rack-{i}" for i in range(self.racks)]


def boot_disk_type(machine_type: str) -> str:
    return "hyperdisk-balanced" if machine_type.startswith(HYPERDISK_ONLY_PREFIXES) else "pd-balanced"


def reserved_label(pool: NodePool, racks: int = 1) -> dict[str, str]:
    """Per GKE node pool: a pool of several racks labels each rack node pool with its share, so the policies' sums
    over node pools bill the reservation once."""
    reserved = reserved_nodes(pool)
    return {} if reserved is None else {RESERVED_NODES_LABEL: str(reserved // racks)}


def reservation_affinity(pool: NodePool, project: str) -> dict | None:
    cap = pool.capacity
    if cap.type in (CapacityType.SPOT, CapacityType.FLEX_START):
        # spot VMs cannot consume reservations; flex-start (DWS) capacity must not (GKE queued provisioning)
        return {"consume_reservation_type": "NO_RESERVATION"}
    if cap.type == CapacityType.RESERVATION:
        owner = cap.reservation_project or project
        value = cap.reservation if owner == project else f"projects/{owner}/reservations/{cap.reservation}"
        if cap.reservation_block:  # block targeting: every node from this block (cluster-toolkit's A4X blueprint)
            value = f"{value}/reservationBlocks/{cap.reservation_block}"
        return {"consume_reservation_type": "SPECIFIC_RESERVATION", "key": RESERVATION_KEY, "values": [value]}
    return None  # on-demand: GKE's default (consume any matching reservation, else on-demand)


def pod_start_node_config(plan: PodStartPlan) -> dict:
    """Image streaming, the secondary boot disk of preloaded images, parallel kubelet pulls: the node-config fields a
    pool's ``podStart`` sets (none when it is omitted, so existing pools are not rolled)."""
    out: dict = {}
    if plan.streaming:
        out["gcfs_config"] = {"enabled": True}
    if plan.boot_disk_image:  # GKE needs gcfs_config enabled for it (validation refuses imageStreaming: false)
        out["secondary_boot_disks"] = [{"disk_image": plan.boot_disk_image, "mode": BOOT_DISK_MODE}]
    if plan.max_parallel_pulls is not None:
        out["kubelet_config"] = {"max_parallel_image_pulls": plan.max_parallel_pulls}
    return out


def workload_policy_args(facts: PoolFacts) -> dict | None:
    """GB200 NVL72 (A4X): the Compute Engine workload policy that places the pool's nodes in whole NVLink domains
    (``HIGH_THROUGHPUT``, accelerator topology ``1x72``), as cluster-toolkit's ``resource-policy`` module and xpk
    create it; the node pool names it as its placement policy. None for other pools."""
    nv = facts.nvlink
    if nv is None or not nv.accelerator_topology or not facts.multi_node:
        return None
    return {"type": WORKLOAD_POLICY_TYPE, "accelerator_topology": nv.accelerator_topology}


def compact_placement(pool: NodePool) -> dict | None:
    """Multi-node pools: compact placement, naming the placement policy a specific reservation was created with
    (``capacity.placementPolicy``) so GKE places the nodes by the reservation's own policy."""
    if not pool.multi_node:
        return None
    policy = pool.capacity.placement_policy if pool.capacity.type == CapacityType.RESERVATION else None
    return {"type": "COMPACT", **({"policy_name": policy} if policy else {})}


def gke_pool_plan(
    pool: NodePool, facts: PoolFacts, pod_start: PodStartPlan, project: str, labels: dict[str, str]
) -> GkePoolPlan:
    """``labels``: the stack's labels (GCP resource labels on the nodes)."""
    machine, runtime = facts.machine, facts.resolved_runtime
    policy = workload_policy_args(facts)
    # each rack is its own node pool: the totals split evenly (validation refuses an uneven split)
    racks = (pool.racks or 1) if policy is not None else 1
    min_nodes, max_nodes = pool.min_nodes // racks, pool.max_nodes // racks
    taints = [{"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": "NO_SCHEDULE"}]
    taints += [{"key": t.key, "value": t.value, "effect": t.effect.provider_value} for t in pool.taints]
    node_config: dict[str, Any] = {
        "machine_type": pool.machine_type,
        "disk_size_gb": pool.disk_size_gib,
        "disk_type": boot_disk_type(pool.machine_type),
        "guest_accelerators": [
            {
                "type": machine.accelerator,
                "count": machine.gpus,
                "gpu_driver_installation_config": {"gpu_driver_version": runtime.gke_driver_installation},
                # gke-managed sharing is a node pool setting (time-sharing / MPS clients, or MIG partitions)
                **runtime.gke_accelerator_sharing,
            }
        ],
        "spot": pool.capacity.type == CapacityType.SPOT,
        # runtime labels decide the advertiser (e.g. turn GKE's plugin off when the GPU Operator owns the pool)
        "labels": {
            **pool.labels,
            **runtime.node_labels,
            **(DRANET_LABEL if facts.fabric is not None and facts.fabric.managed else {}),
            **facts.pool_label,
        },
        "taints": taints,
        SERVICE_ACCOUNT: None,
        "gvnic": {"enabled": True},
        # a reservation pool names its reserved nodes (billed whether used or not) for the cost policies
        "resource_labels": {**labels, **reserved_label(pool, racks)} or None,
    }
    ssds = ephemeral_local_ssds(facts.cloud, pool)
    if ssds:  # images, emptyDir and scratch on the machine's NVMe RAID instead of the boot disk
        node_config["ephemeral_storage_local_ssd_config"] = {"local_ssd_count": ssds}
    if facts.fabric is not None:  # NCCL's socket paths (bootstrap, TCPX) get cluster-toolkit's TCP buffer sizes
        node_config["linux_node_config"] = {"sysctls": dict(GPU_TCP_SYSCTLS)}
    node_config.update(pod_start_node_config(pod_start))
    affinity = reservation_affinity(pool, project)
    if affinity is not None:
        node_config["reservation_affinity"] = affinity
    flex, queued = is_flex_start(pool), is_queued(pool)
    if flex:  # DWS capacity; GKE deletes each node after maxRunDuration
        node_config["flex_start"] = True
        node_config["max_run_duration"] = max_run_duration(pool)
    spread = pool.capacity.type in (CapacityType.SPOT, CapacityType.RESERVATION) or pool.multi_node or flex
    return GkePoolPlan(
        node_config=node_config,
        node_locations=list(pool.zones),
        initial_node_count=math.ceil(min_nodes / len(pool.zones)),  # per zone
        autoscaling={
            "total_min_node_count": min_nodes,
            "total_max_node_count": max_nodes,
            # ANY finds capacity wherever it exists (spot, reservations, compact groups)
            "location_policy": "ANY" if spread else "BALANCED",
        },
        # flex-start nodes are not repaired (GKE's flex-start node pools run with auto-repair off)
        management={"auto_repair": not flex, "auto_upgrade": True},
        upgrade_settings={
            "strategy": "SURGE",
            "max_surge": pool.upgrade.max_surge,
            "max_unavailable": pool.upgrade.max_unavailable,
        },
        # GKE refuses compact placement on queued-provisioning GPU pools
        placement_policy=None if queued else compact_placement(pool),
        workload_policy=policy,
        # nodes only through ProvisioningRequests (Kueue's ProvisioningRequest AdmissionCheck)
        queued_provisioning={"enabled": True} if queued else None,
        delete_before_replace=pool.capacity.type == CapacityType.RESERVATION,
        racks=racks,
    )
