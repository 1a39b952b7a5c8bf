"""One EKS GPU managed node group: NVIDIA AMI, GPU taint, pool label, IMDSv2, EFA + placement group when multi-node,
and the Auto Scaling group tags Cluster Autoscaler needs to find the group and scale it up from zero."""
from __future__ import annotations

import base64
from typing import Sequence

import pulumi
import pulumi_aws as aws

from catalog import CapacityType
from components.eks.node_defaults import metadata_options, root_volume
from components.eks.capacity_block_schedule import block_schedules
from plan.queued import QUEUED_TAG
from components.eks.cluster_autoscaler import GPU_LABEL, discovery_tags, node_template_tags, tag_node_group_asg
from components.cluster_refs import EksClusterRef
from render.fabric_pod import EFA_NODE_HUGEPAGES
from plan.capacity_block import (
    BLOCK_END_TAG, BLOCK_FEE_TAG, BLOCK_START_TAG, RESERVED_NODES_TAG, ScheduledSize, block_window, is_capacity_block,
    iso, reserved_nodes,
)
from spec.eks_node import repair_config, root_volume_performance
from render.nodeadm import nodeadm_user_data
from plan.efa_layout import efa_layout
from plan.fabric import fabric_mode
from spec.fabric import FabricMode
from plan.facts import GPU_TAINT_VALUE, PoolFacts
from spec.stack import GPU_TAINT_KEY, AwsReservationKind, NodePool

NVIDIA_AMI = {"x86_64": "AL2023_x86_64_NVIDIA", "arm64": "AL2023_ARM_64_NVIDIA"}
HELD_AT_BLOCK = ("launchTemplate.version", "releaseVersion", "version")
"""Node group inputs whose change rolls every node; held on a capacity block until ``capacity.rollNodes``."""


def efa_interfaces(pool: NodePool, facts: PoolFacts, security_groups: list) -> list[dict]:
    """One EFA per network card, laid out per card by ``plan/efa_layout.py`` (P6e-GB200 follows its catalog rows)."""
    return [{"network_card_index": a.network_card_index, "device_index": a.device_index,
             "interface_type": a.interface_type, "delete_on_termination": "true", "security_groups": security_groups}
            for a in efa_layout(facts.machine)]


def has_efa(pool: NodePool) -> bool:
    """Multi-node pools carry EFA unless their fabric is turned off (``fabric.mode: off``)."""
    return pool.multi_node and fabric_mode(pool.fabric) != FabricMode.OFF


def efa_count(facts: PoolFacts) -> int:
    return len(efa_layout(facts.machine))


def capacity_type(pool: NodePool) -> str:
    cap = pool.capacity
    if cap.type == CapacityType.SPOT:
        return "SPOT"
    if cap.type == CapacityType.RESERVATION and cap.reservation_kind == AwsReservationKind.CAPACITY_BLOCK:
        return "CAPACITY_BLOCK"
    return "ON_DEMAND"


def scaling_config(pool: NodePool) -> dict:
    """A capacity-block group is created at size 0 (min 0 too): EC2 launches nothing into a block before it is
    active, and its scheduled actions (``block_schedule``) size it for the window. Other groups start at minNodes."""
    floor = 0 if is_capacity_block(pool) else pool.min_nodes
    return {"min_size": floor, "desired_size": floor, "max_size": pool.max_nodes}


def ignored_changes(pool: NodePool) -> list[str]:
    """The autoscaler owns ``desiredSize``. A capacity-block group is upgraded only at size 0 (EKS user guide,
    "Create a managed node group with Capacity Blocks for ML"), so a launch-template or AMI change is not rolled
    into it unless ``capacity.rollNodes`` says the group is at 0 now."""
    ignored = ["scalingConfig.desiredSize"]
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
    return {"max_unavailable": pool.upgrade.max_unavailable,
            "update_strategy": "MINIMAL" if pool.upgrade.max_surge == 0 else "DEFAULT"}


def node_labels(pool: NodePool, facts: PoolFacts) -> dict[str, str]:
    """The pool's labels, the GPU runtime's, the accelerator label Cluster Autoscaler reads and the pool label."""
    return {**pool.labels, **(facts.runtime.node_labels if facts.runtime else {}),
            GPU_LABEL: f"nvidia-{facts.machine.gpu_model.slurm_name}", **facts.pool_label}


def autoscaler_tags(pool: NodePool, facts: PoolFacts, cluster: EksClusterRef, labels: dict[str, str]) -> dict:
    """Auto-discovery tags plus the node template: every label, the GPU taint and the pool's taints, and the
    ``nvidia.com/gpu`` (and ``vpc.amazonaws.com/efa`` with the EFA huge pages) a node will advertise, which Cluster Autoscaler cannot learn
    from the instance type when GPUs are shared (time-slicing, MPS, MIG) or for EFA."""
    taints = [(GPU_TAINT_KEY, GPU_TAINT_VALUE, "NoSchedule")] + [(t.key, t.value, t.effect.value) for t in pool.taints]
    runtime = facts.runtime
    resources: dict[str, int | str] = {
        "nvidia.com/gpu": runtime.advertised_gpus_per_node if runtime else facts.gpus_per_node}
    if has_efa(pool) and (runtime is None or runtime.efa_device_plugin):
        resources["vpc.amazonaws.com/efa"] = efa_count(facts)
        resources.update(EFA_NODE_HUGEPAGES)  # EFA jobs request huge pages: a group at 0 must show them
    return {**discovery_tags(cluster.spec_name), **node_template_tags(labels, taints, resources)}


class EksGpuNodeGroup(pulumi.ComponentResource):
    """An `aws.eks.NodeGroup` with its own launch template (and placement group + EFA security group when
    multi-node). The node group name is auto-named by Pulumi so replacements are create-before-delete;
    `scalingConfig.desiredSize` belongs to the autoscaler and is in `ignore_changes`; its Auto Scaling group carries
    the Cluster Autoscaler discovery and node-template tags.

    Reservation pools get no new placement group: a targeted capacity reservation serves only instances launched
    into the placement group it was created in, if any ("Use Capacity Reservations with cluster placement groups",
    docs.aws.amazon.com/AWSEC2/latest/UserGuide/cr-cpg.html), so an ODCR pool uses ``capacity.placementGroup`` (the
    group the reservation lives in) when given; Capacity Blocks are placed close together in EC2 UltraClusters
    already (EC2 API reference, CapacityBlock).
    """

    facts: PoolFacts
    node_group: aws.eks.NodeGroup
    launch_template: aws.ec2.LaunchTemplate
    asg_tags: list[aws.autoscaling.Tag]
    schedules: list[aws.autoscaling.Schedule]
    """Capacity blocks with a window: the scale-up and scale-down actions still ahead (``block_schedule``)."""

    def __init__(self, name: str, pool: NodePool, facts: PoolFacts, cluster: EksClusterRef, tags: dict[str, str],
                 schedule: Sequence[ScheduledSize] = (), opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-cluster:aws:EksGpuNodeGroup", name, None, opts)
        self.facts = facts
        child = pulumi.ResourceOptions(parent=self)
        pool_tags = {**tags, "gpu-cluster/pool": pool.name}
        cap = pool.capacity
        throughput, iops = root_volume_performance(pool.root_volume)
        lt_args: dict = {"metadata_options": metadata_options(),
                         "block_device_mappings": root_volume(pool.disk_size_gib, throughput, iops),
                         "update_default_version": True, "tags": pool_tags,
                         "tag_specifications": [{"resource_type": "instance", "tags": pool_tags}]}
        user_data = nodeadm_user_data(pool)  # NVMe RAID0 for images and scratch, fast image pull, parallel pulls
        if user_data is not None:
            lt_args["user_data"] = base64.b64encode(user_data.encode()).decode()
        if pool.multi_node:
            efa_sg = aws.ec2.SecurityGroup(
                f"{name}-efa-sg", vpc_id=cluster.vpc_id,
                description=f"EFA traffic between nodes of GPU pool {pool.name}",
                ingress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True,
                          "description": "all traffic within the pool (EFA requires it)"}],
                egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True,
                         "description": "all traffic within the pool (EFA requires it)"},
                        {"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"],
                         "description": "outbound (images, cloud APIs)"}],
                tags=pool_tags, opts=child)
            if has_efa(pool):
                lt_args["network_interfaces"] = efa_interfaces(pool, facts,
                                                               [cluster.cluster_security_group_id, efa_sg.id])
            if cap.type != CapacityType.RESERVATION:  # a reservation brings its own placement (see above)
                placement = aws.ec2.PlacementGroup(f"{name}-pg", strategy="cluster", tags=pool_tags, opts=child)
                lt_args["placement"] = {"group_name": placement.name}
        if cap.type == CapacityType.RESERVATION:
            if cap.placement_group:
                lt_args["placement"] = {"group_name": cap.placement_group}
            lt_args["capacity_reservation_specification"] = {
                "capacity_reservation_target": {"capacity_reservation_id": cap.reservation}}
            if cap.reservation_kind == AwsReservationKind.CAPACITY_BLOCK:
                lt_args["instance_market_options"] = {"market_type": "capacity-block"}
        self.launch_template = aws.ec2.LaunchTemplate(f"{name}-lt", **lt_args, opts=child)
        labels = node_labels(pool, facts)
        taints = [{"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": "NO_SCHEDULE"}]
        taints += [{"key": t.key, "value": t.value, "effect": t.effect.provider_value} for t in pool.taints]
        self.node_group = aws.eks.NodeGroup(
            name,
            cluster_name=cluster.name, node_role_arn=cluster.node_role_arn,
            subnet_ids=[cluster.subnets[z] for z in pool.zones],
            ami_type=NVIDIA_AMI[facts.machine.arch], instance_types=[pool.machine_type],
            release_version=pool.ami_release_version,  # None: EKS's newest at create/update (preview advises pinning)
            capacity_type=capacity_type(pool),
            scaling_config=scaling_config(pool),
            launch_template={"id": self.launch_template.id,
                             "version": self.launch_template.latest_version.apply(str)},
            labels=labels,
            taints=taints,
            update_config=update_config(pool),
            node_repair_config=repair_config(pool.node_repair, cap.type == CapacityType.RESERVATION),
            # a queued group names its ProvisioningRequest class, so policies can check a queue reaches it
            tags={**pool_tags, **reservation_tags(pool),
                  **({QUEUED_TAG: facts.queued.provisioning_class} if facts.queued else {})},
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=ignored_changes(pool)))
        self.asg_tags = tag_node_group_asg(name, self.node_group, autoscaler_tags(pool, facts, cluster, labels),
                                           parent=self)
        self.schedules = block_schedules(name, self.node_group, list(schedule), parent=self)
        self.register_outputs({"nodeGroupArn": self.node_group.arn, "gpusPerNode": facts.gpus_per_node,
                               "maxGpus": facts.max_gpus})
