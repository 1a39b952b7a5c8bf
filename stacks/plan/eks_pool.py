"""Everything an EKS GPU managed node group needs, resolved from the spec pool and its facts: capacity type and
reservation, capacity-block window tags and scheduled sizes, EFA and placement, labels and taints, the Cluster
Autoscaler node template, node repair, the gp3 root volume and what nodeadm's user data holds.
``components/eks/gpu_node_group.py`` only wires this to the launch template and node group. Pure: no Pulumi."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

from catalog import CapacityType, Cloud
from stacks.plan.capacity_block import (
    BLOCK_END_TAG,
    BLOCK_FEE_TAG,
    BLOCK_START_TAG,
    ScheduledSize,
    block_schedule,
    block_window,
    iso,
    sizes_in_force,
)
from stacks.plan.efa_layout import EfaAttachment, efa_count as layout_efa_count, efa_layout
from stacks.plan.fabric import EFA_NODE_HUGEPAGES, fabric_mode
from stacks.plan.facts import GPU_TAINT_VALUE, PoolFacts
from stacks.plan.node_storage import instance_store_raid
from stacks.plan.pod_start import PodStartPlan
from stacks.plan.queued import QUEUED_TAG
from stacks.plan.reservation import RESERVED_NODES_TAG, is_capacity_block, reserved_nodes
from stacks.spec.eks_node import repair_config, root_volume_performance
from stacks.spec.fabric import FabricMode
from stacks.spec.gpu_runtime import GpuRuntimeMode
from stacks.spec.capacity import AwsReservationKind
from stacks.spec.stack import GPU_TAINT_KEY, NodePool

NVIDIA_AMI = {"x86_64": "AL2023_x86_64_NVIDIA", "arm64": "AL2023_ARM_64_NVIDIA"}
HELD_AT_BLOCK = ("launchTemplate.version", "releaseVersion", "version")
"""Node group inputs whose change rolls every node; held on a capacity block until ``capacity.rollNodes``."""
GPU_LABEL = "k8s.amazonaws.com/accelerator"
"""The node label Cluster Autoscaler's AWS provider reads to know a node has GPUs still to be advertised by the
device plugin, so it does not add a second node meanwhile (cluster-autoscaler AWS README, "Special note on GPU
instances")."""


@dataclass(frozen=True)
class EksPoolPlan:
    machine_type: str
    ami_type: str
    zones: tuple[str, ...]
    release_version: str | None
    """None: EKS's newest at create/update (the preview advises pinning)."""
    pool_tags: dict[str, str]
    disk_size_gib: int
    root_throughput: int
    root_iops: int
    pod_start: PodStartPlan
    instance_store_raid: bool
    """What nodeadm's user data holds (``render/nodeadm.py``): fast image pull, parallel pulls, NVMe RAID0."""
    multi_node: bool
    efa_interfaces: int
    """EFA network cards to attach (0: none)."""
    efa_cards: tuple[EfaAttachment, ...]
    """The EFA interface on each card (``stacks/plan/efa_layout.py``; empty: none)."""
    own_placement_group: bool
    """A cluster placement group of its own (multi-node, not on a reservation, which brings its own placement)."""
    reservation_id: str | None
    reservation_placement_group: str | None
    capacity_block: bool
    capacity_type: str
    scaling_config: dict[str, int]
    labels: dict[str, str]
    taints: list[dict[str, str]]
    update_config: dict[str, Any]
    node_repair_config: dict[str, Any]
    tags: dict[str, str]
    ignore_changes: list[str]
    autoscaler_taints: list[tuple[str, str, str]]
    autoscaler_resources: dict[str, int | str]
    schedule: tuple[ScheduledSize, ...]
    """Capacity blocks with a window: the scale-up and scale-down actions still ahead."""
    mask_host_imex: bool = False
    """The nodes run IMEX in ComputeDomain daemons: the user data masks the AMI's own ``nvidia-imex.service``."""
    toolkit_lockdown: bool = False
    """The pool runs NVIDIA's device plugin (volume-mounts): its user data sets the node toolkit to refuse a pod's
    ``NVIDIA_VISIBLE_DEVICES`` (``render/nodeadm.py``)."""
    reservation_ids: tuple[str, ...] = ()
    """Several UltraServer capacity blocks (``capacity.reservations``): one node group per block, each targeting its
    block's ID."""
    groups: tuple[tuple[str, EksPoolPlan], ...] = ()
    """The managed node groups, as (name suffix, plan): ``("", self)`` alone, or one per UltraServer block
    (``-us-0``, ``-us-1``, …; ``ultraserver_groups``)."""


def has_efa(pool: NodePool) -> bool:
    """Multi-node pools carry EFA unless their fabric is turned off (``fabric.mode: off``)."""
    return pool.multi_node and fabric_mode(pool.fabric) != FabricMode.OFF


def efa_count(facts: PoolFacts) -> int:
    return layout_efa_count(efa_layout(facts.machine))


def claims_dra(facts: PoolFacts) -> bool:
    """The pool's job pods claim a DRA device (the IMEX channel of a ComputeDomain on rack-scale pools)."""
    return facts.nvlink is not None and facts.nvlink.compute_domains


def capacity_type(pool: NodePool) -> str:
    cap = pool.capacity
    if cap.type == CapacityType.SPOT:
        return "SPOT"
    if cap.type == CapacityType.RESERVATION and cap.reservation_kind == AwsReservationKind.CAPACITY_BLOCK:
        return "CAPACITY_BLOCK"
    return "ON_DEMAND"


def scaling_config(pool: NodePool, now: dt.datetime | None = None, fill: bool = False) -> dict:
    """A capacity-block group is created at size 0 (min 0 too): EC2 launches nothing into a block before it is
    active, and its scheduled actions (``block_schedule``) size it for the window. Other groups start at minNodes.

    ``fill`` (the block's scale-up brings every node up, ``block_schedule``): once the window is open the group's
    own sizes are the scale-up action's, so a ``pulumi up`` during the block sends min = desired = the block instead
    of the 0/0 it was created with (which EKS would apply to the Auto Scaling group, stopping every node). With
    ``capacity.rollNodes`` the user asks for 0 (EKS upgrades such a group only at 0); setting it back to false then
    brings the block's nodes up again."""
    floor = 0 if is_capacity_block(pool) else pool.min_nodes
    hold = fill and is_capacity_block(pool) and not pool.capacity.roll_nodes
    held = sizes_in_force(pool, now, fill) if hold and now is not None else None
    if held is not None and held.role == "scale-up":
        return {"min_size": held.min_size, "desired_size": held.desired, "max_size": pool.max_nodes}
    return {"min_size": floor, "desired_size": floor, "max_size": pool.max_nodes}


def ignored_changes(pool: NodePool, fill: bool = False) -> list[str]:
    """The autoscaler owns ``desiredSize``, except on a capacity block the schedule fills (``fill``): there the
    schedule owns every size, and an ignored desiredSize would send the created 0 next to a min of the whole block.
    A capacity-block group is upgraded only at size 0 (EKS user guide, "Create a managed node group with Capacity
    Blocks for ML"), so a launch-template or AMI change is not rolled into it unless ``capacity.rollNodes`` says the
    group is at 0 now."""
    ignored = [] if fill and is_capacity_block(pool) else ["scalingConfig.desiredSize"]
    if is_capacity_block(pool) and not pool.capacity.roll_nodes:
        ignored += list(HELD_AT_BLOCK)
    return ignored


def reservation_tags(pool: NodePool) -> dict[str, str]:
    """What the cost policies read from the node group: the reserved nodes, billed whether used or not, and a
    capacity block's upfront fee and window (absent: unknown, and the budget rule fails closed)."""
    reserved = reserved_nodes(pool)
    if reserved is None:
        return {}
    tags = {RESERVED_NODES_TAG: str(reserved)}
    window = block_window(pool)
    if is_capacity_block(pool) and pool.capacity.upfront_fee_usd is not None:
        tags[BLOCK_FEE_TAG] = f"{pool.capacity.upfront_fee_usd:.2f}"
    if is_capacity_block(pool) and window is not None:
        tags.update({BLOCK_START_TAG: iso(window.start), BLOCK_END_TAG: iso(window.end)})
    return tags


def update_config(pool: NodePool) -> dict:
    """EKS has no surge count: maxSurge 0 maps to the MINIMAL strategy (old nodes terminated before new ones launch,
    for scarce GPUs), maxSurge > 0 to DEFAULT (new nodes first; EKS picks how many). Validation refuses
    maxUnavailable 0 on EKS (EKS API NodegroupUpdateConfig: maxUnavailable 1-100)."""
    return {
        "max_unavailable": pool.upgrade.max_unavailable,
        "update_strategy": "MINIMAL" if pool.upgrade.max_surge == 0 else "DEFAULT",
    }


def node_labels(pool: NodePool, facts: PoolFacts) -> dict[str, str]:
    """The pool's labels, the GPU runtime's, the accelerator label Cluster Autoscaler reads and the pool label."""
    return {
        **pool.labels,
        **(facts.runtime.node_labels if facts.runtime else {}),
        GPU_LABEL: f"nvidia-{facts.machine.gpu_model.slurm_name}",
        **facts.pool_label,
    }


def eks_pool_plan(
    pool: NodePool, facts: PoolFacts, pod_start: PodStartPlan, tags: dict[str, str], now: dt.datetime
) -> EksPoolPlan:
    """``tags``: the stack's labels (AWS tags); ``now``: a capacity block's actions already past are not planned."""
    cap = pool.capacity
    throughput, iops = root_volume_performance(pool.root_volume)
    runtime = facts.runtime
    efa = has_efa(pool)
    resources: dict[str, int | str] = {
        "nvidia.com/gpu": runtime.advertised_gpus_per_node if runtime else facts.gpus_per_node
    }
    if efa and (runtime is None or runtime.efa_device_plugin):
        resources["vpc.amazonaws.com/efa"] = efa_count(facts)
        resources.update(EFA_NODE_HUGEPAGES)  # EFA jobs request huge pages: a group at 0 must show them
    reservation = cap.type == CapacityType.RESERVATION
    pool_tags = {**tags, "gpu-cluster/pool": pool.name}
    plan = EksPoolPlan(
        machine_type=pool.machine_type,
        ami_type=NVIDIA_AMI[facts.machine.arch],
        zones=tuple(pool.zones),
        release_version=pool.ami_release_version,
        pool_tags=pool_tags,
        disk_size_gib=pool.disk_size_gib,
        root_throughput=throughput,
        root_iops=iops,
        pod_start=pod_start,
        instance_store_raid=instance_store_raid(Cloud.AWS, pool),
        multi_node=pool.multi_node,
        mask_host_imex=claims_dra(facts),
        # every NVIDIA device plugin here (ours or the GPU Operator's) lists GPUs by volume mounts, so a pod's
        # NVIDIA_VISIBLE_DEVICES must select nothing on any of them
        toolkit_lockdown=facts.resolved_runtime.mode in (GpuRuntimeMode.DEVICE_PLUGIN, GpuRuntimeMode.GPU_OPERATOR),
        efa_interfaces=efa_count(facts) if efa else 0,
        efa_cards=efa_layout(facts.machine) if efa else (),
        own_placement_group=pool.multi_node and not reservation,
        reservation_id=cap.reservation if reservation else None,
        reservation_placement_group=cap.placement_group if reservation else None,
        reservation_ids=tuple(cap.reservations or ()) if reservation else (),
        capacity_block=reservation and cap.reservation_kind == AwsReservationKind.CAPACITY_BLOCK,
        capacity_type=capacity_type(pool),
        scaling_config=scaling_config(pool, now, claims_dra(facts)),
        labels=node_labels(pool, facts),
        taints=[{"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": "NO_SCHEDULE"}]
        + [{"key": t.key, "value": t.value, "effect": t.effect.provider_value} for t in pool.taints],
        update_config=update_config(pool),
        node_repair_config=repair_config(pool.node_repair, reservation),
        # a queued group names its ProvisioningRequest class, so policies can check a queue reaches it
        tags={
            **pool_tags,
            **reservation_tags(pool),
            **({QUEUED_TAG: facts.queued.provisioning_class} if facts.queued else {}),
        },
        ignore_changes=ignored_changes(pool, claims_dra(facts)),
        autoscaler_taints=[(GPU_TAINT_KEY, GPU_TAINT_VALUE, "NoSchedule")]
        + [(t.key, t.value, t.effect.value) for t in pool.taints],
        autoscaler_resources=resources,
        # pods claiming an IMEX channel never trigger a scale-from-zero: the block's start brings the nodes up
        schedule=tuple(block_schedule(pool, now, fill=claims_dra(facts))),
    )
    return replace(plan, groups=tuple(ultraserver_groups(plan)))


def ultraserver_groups(plan: EksPoolPlan) -> list[tuple[str, EksPoolPlan]]:
    """The managed node groups of a pool as (name suffix, plan): one, or one per UltraServer capacity block
    (``<pool>-us-<i>``). An EKS
    managed node group on a block needs that block's ID in its launch template (row
    ``eks-capacity-block-mng-reservation-id``), so each block gets its own group, with an even share of the sizes,
    the scheduled actions, the reserved nodes and the fee; all keep the pool's label and tags, so Kueue, Slurm and
    the policies (which sum a pool's groups) see one pool."""
    n = len(plan.reservation_ids)
    if n < 2:
        return [("", plan)]
    tags = dict(plan.tags)
    if RESERVED_NODES_TAG in tags:
        tags[RESERVED_NODES_TAG] = str(int(tags[RESERVED_NODES_TAG]) // n)
    if BLOCK_FEE_TAG in tags:
        tags[BLOCK_FEE_TAG] = f"{float(tags[BLOCK_FEE_TAG]) / n:.2f}"
    share = replace(
        plan,
        scaling_config={k: v // n for k, v in plan.scaling_config.items()},
        tags=tags,
        schedule=tuple(
            replace(a, min_size=a.min_size // n, max_size=a.max_size // n, desired=a.desired // n)
            for a in plan.schedule
        ),
        reservation_ids=(),
    )
    return [(f"-us-{i}", replace(share, reservation_id=rid)) for i, rid in enumerate(plan.reservation_ids)]
