"""The Auto Scaling scheduled actions of an EKS capacity-block node group: up at the block's start, to zero 45
minutes before its end (EKS user guide, "Create self-managed nodes with Capacity Blocks for ML": scale to zero
more than 30 minutes before the end, when EC2 starts terminating the block's instances; EKS's own managed-node-group
action runs at 40). The actions sit on the
Auto Scaling group EKS made for the managed node group, which only EKS names (``resources[0].autoscalingGroups``)."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.eks.cluster_autoscaler import node_group_asg_name
from stacks.plan.capacity_block import ScheduledSize


def block_schedules(
    name: str, node_group: aws.eks.NodeGroup, actions: list[ScheduledSize], parent: pulumi.Resource
) -> list[aws.autoscaling.Schedule]:
    """One one-time ``aws.autoscaling.Schedule`` per action, named ``<pool>-<role>`` (``p5-scale-up``)."""
    asg = node_group_asg_name(node_group)
    return [
        aws.autoscaling.Schedule(
            f"{name}-{a.role}",
            autoscaling_group_name=asg,
            scheduled_action_name=f"gpu-cluster-{name}-{a.role}",
            start_time=a.at_iso,
            min_size=a.min_size,
            max_size=a.max_size,
            desired_capacity=a.desired,
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[node_group]),
        )
        for a in actions
    ]
