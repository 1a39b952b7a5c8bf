"""One EKS GPU managed node group: NVIDIA AMI, GPU taint, pool label, IMDSv2, EFA + placement group when multi-node,
and the Auto Scaling group tags Cluster Autoscaler needs to find the group and scale it up from zero. Everything is
resolved in its plan (``stacks/plan/eks_pool.py``); this component wires it to the launch template and the cluster."""

from __future__ import annotations

import base64
from typing import Sequence

import pulumi
import pulumi_aws as aws

from components.cluster_refs import EksClusterRef
from components.eks.capacity_block_schedule import block_schedules
from components.eks.cluster_autoscaler import discovery_tags, node_template_tags, tag_node_group_asg
from components.eks.node_defaults import metadata_options, root_volume
from stacks.plan.efa_layout import EfaAttachment
from stacks.plan.eks_pool import EksPoolPlan
from stacks.plan.facts import PoolFacts
from stacks.plan.stack import PoolPlan
from render.nodeadm import nodeadm_user_data


def efa_interfaces(cards: Sequence[EfaAttachment], security_groups: list) -> list[dict]:
    """The launch template's network interfaces: one EFA per card as the plan lays them out (``stacks/plan/efa_layout.py``:
    card 0 the primary ``efa``, the rest ``efa-only`` at device 1, or the catalog's per-card layout on P6e-GB200: card 0
    plain ENA, ``efa-only`` on cards 1, 5, 9 and 13)."""
    return [
        {
            "network_card_index": a.network_card_index,
            "device_index": a.device_index,
            "interface_type": a.interface_type,
            "delete_on_termination": "true",
            "security_groups": security_groups,
        }
        for a in cards
    ]


class EksGpuNodeGroup(pulumi.ComponentResource):
    """An `aws.eks.NodeGroup` with its own launch template (and placement group + EFA security group when
    multi-node). The node group name is auto-named by Pulumi so replacements are create-before-delete;
    `scalingConfig.desiredSize` belongs to the autoscaler and is in `ignore_changes` (not on a capacity block the
    schedule fills: there the plan's sizes follow the window, ``stacks/plan/eks_pool.py``); its Auto Scaling group
    carries the Cluster Autoscaler discovery and node-template tags.

    Reservation pools get no new placement group: a targeted capacity reservation serves only instances launched
    into the placement group it was created in, if any ("Use Capacity Reservations with cluster placement groups",
    docs.aws.amazon.com/AWSEC2/latest/UserGuide/cr-cpg.html), so an ODCR pool uses ``capacity.placementGroup`` (the
    group the reservation lives in) when given; Capacity Blocks are placed close together in EC2 UltraClusters
    already (EC2 API reference, CapacityBlock).
    """

    facts: PoolFacts
    node_group: aws.eks.NodeGroup
    launch_template: aws.ec2.LaunchTemplate
    node_groups: list[aws.eks.NodeGroup]
    """One, or one per UltraServer capacity block (``<pool>-us-<i>``, ``stacks/plan/eks_pool.ultraserver_groups``)."""
    launch_templates: list[aws.ec2.LaunchTemplate]
    asg_tags: list[aws.autoscaling.Tag]
    schedules: list[aws.autoscaling.Schedule]
    """Capacity blocks with a window: the scale-up and scale-down actions still ahead (``block_schedule``)."""

    def __init__(self, name: str, plan: PoolPlan, cluster: EksClusterRef, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-cluster:aws:EksGpuNodeGroup", name, None, opts)
        self.facts = facts = plan.facts
        eks = plan.eks
        assert eks is not None, f"pool {plan.name}: an EKS node group needs its EKS plan"
        child = pulumi.ResourceOptions(parent=self)
        pool_tags = eks.pool_tags
        lt_args: dict = {
            "metadata_options": metadata_options(),
            "block_device_mappings": root_volume(eks.disk_size_gib, eks.root_throughput, eks.root_iops),
            "update_default_version": True,
            "tags": pool_tags,
            "tag_specifications": [{"resource_type": "instance", "tags": pool_tags}],
        }
        # NVMe RAID0 for images and scratch, fast image pull, parallel pulls; the host IMEX service masked; the
        # toolkit's env-var lockdown
        user_data = nodeadm_user_data(eks.pod_start, eks.instance_store_raid, eks.mask_host_imex, eks.toolkit_lockdown)
        if user_data is not None:
            lt_args["user_data"] = base64.b64encode(user_data.encode()).decode()
        if eks.multi_node:
            efa_sg = aws.ec2.SecurityGroup(
                f"{name}-efa-sg",
                vpc_id=cluster.vpc_id,
                description=f"EFA traffic between nodes of GPU pool {plan.name}",
                ingress=[
                    {
                        "protocol": "-1",
                        "from_port": 0,
                        "to_port": 0,
                        "self": True,
                        "description": "all traffic within the pool (EFA requires it)",
                    }
                ],
                egress=[
                    {
                        "protocol": "-1",
                        "from_port": 0,
                        "to_port": 0,
                        "self": True,
                        "description": "all traffic within the pool (EFA requires it)",
                    },
                    {
                        "protocol": "-1",
                        "from_port": 0,
                        "to_port": 0,
                        "cidr_blocks": ["0.0.0.0/0"],
                        "description": "outbound (images, cloud APIs)",
                    },
                ],
                tags=pool_tags,
                opts=child,
            )
            if eks.efa_interfaces:
                lt_args["network_interfaces"] = efa_interfaces(
                    eks.efa_cards, [cluster.cluster_security_group_id, efa_sg.id]
                )
            if eks.own_placement_group:  # a reservation brings its own placement (see above)
                placement = aws.ec2.PlacementGroup(f"{name}-pg", strategy="cluster", tags=pool_tags, opts=child)
                lt_args["placement"] = {"group_name": placement.name}
        if eks.reservation_placement_group:
            lt_args["placement"] = {"group_name": eks.reservation_placement_group}
        if eks.capacity_block:
            lt_args["instance_market_options"] = {"market_type": "capacity-block"}
        self.node_groups, self.launch_templates, self.asg_tags, self.schedules = [], [], [], []
        # several UltraServer blocks: one node group per block, each targeting its block's ID
        for suffix, group in eks.groups or (("", eks),):
            self._node_group(f"{name}{suffix}", group, cluster, lt_args)
        self.node_group, self.launch_template = self.node_groups[0], self.launch_templates[0]
        self.register_outputs(
            {"nodeGroupArn": self.node_group.arn, "gpusPerNode": facts.gpus_per_node, "maxGpus": facts.max_gpus}
        )

    def _node_group(self, name: str, eks: EksPoolPlan, cluster: EksClusterRef, lt_args: dict) -> None:
        child = pulumi.ResourceOptions(parent=self)
        if eks.reservation_id is not None:
            target = {"capacity_reservation_id": eks.reservation_id}
            lt_args = {**lt_args, "capacity_reservation_specification": {"capacity_reservation_target": target}}
        launch_template = aws.ec2.LaunchTemplate(f"{name}-lt", **lt_args, opts=child)
        node_group = aws.eks.NodeGroup(
            name,
            cluster_name=cluster.name,
            node_role_arn=cluster.node_role_arn,
            subnet_ids=[cluster.subnets[z] for z in eks.zones],
            ami_type=eks.ami_type,
            # the instance type on the node group, not in the launch template: the EKS capacity-block guide lists
            # InstanceType in the template data, but EKS accepts either place (not both), and AWS's own blueprint
            # (aws-ia/terraform-aws-eks-blueprints patterns/ml-capacity-block/eks.tf) sets it here with the block's
            # target in the template, as gpu-cluster does
            instance_types=[eks.machine_type],
            release_version=eks.release_version,  # None: EKS's newest at create/update (preview advises pinning)
            capacity_type=eks.capacity_type,
            scaling_config=eks.scaling_config,
            launch_template={"id": launch_template.id, "version": launch_template.latest_version.apply(str)},
            labels=eks.labels,
            taints=eks.taints,
            update_config=eks.update_config,
            node_repair_config=eks.node_repair_config,
            tags=eks.tags,
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=eks.ignore_changes),
        )
        asg_tags = {
            **discovery_tags(cluster.spec_name),
            **node_template_tags(eks.labels, eks.autoscaler_taints, eks.autoscaler_resources),
        }
        self.launch_templates.append(launch_template)
        self.node_groups.append(node_group)
        self.asg_tags += tag_node_group_asg(name, node_group, asg_tags, parent=self)
        self.schedules += block_schedules(name, node_group, list(eks.schedule), parent=self)
