"""The extra VPC networks of one GKE fabric kind: created by gpu-cluster (``fabric.mode: auto``) or found by name
(``existing``). gVNIC networks (TCPX, TCPXO, and RDMA's one extra gVNIC) get their own VPC, one subnet, MTU 8244 and
a firewall rule that lets the subnet talk to itself; RDMA gets one RoCE VPC made with the zone's ``-vpc-roce``
network profile, MTU 8896 and 8 subnets (cluster-toolkit ``modules/network/multivpc`` and ``gpu-rdma-vpc``; GKE's
GPUDirect guides). Networks and subnets cost nothing per hour."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from stacks.plan.fabric import FabricNetworkPlan, FabricPlan

GVNIC_MTU = 8244
"""GKE's GPUDirect-TCPX/TCPXO guides and cluster-toolkit's multivpc: jumbo frames on the GPU NIC networks."""
ROCE_MTU = 8896
ROCE_MTU_ALLOWED = (1300, 8896)
"""The RoCE VPC's MTU: GoogleCloudPlatform/cluster-toolkit@10470803 modules/network/gpu-rdma-vpc/variables.tf
(``mtu`` default 8896, "Allowed are all values in the range 1300 to 8896, inclusively" for the RDMA profile). Left
unset, GCE gives 1460, which caps the RoCEv2 path MTU of every GPU NIC."""


@dataclass(frozen=True)
class Attachment:
    """One extra NIC of a node: the Kubernetes network name and the VPC network and subnet behind it."""

    plan: FabricNetworkPlan
    network: pulumi.Input[str]
    subnetwork: pulumi.Input[str]


def roce_profile(project: str, zone: str) -> str:
    return f"projects/{project}/global/networkProfiles/{zone}-vpc-roce"


class GkeFabricNetworks(pulumi.ComponentResource):
    """The networks behind ``vpc1…vpcN`` (or ``gvnic-1`` + ``rdma-0…7``) for every pool of one fabric kind."""

    attachments: list[Attachment]

    def __init__(
        self,
        name: str,
        plan: FabricPlan,
        cluster_name: str,
        project: str,
        region: str,
        zone: str,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:gcp:GkeFabricNetworks", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.attachments = []
        if not plan.creates_networks:
            self.attachments = [Attachment(n, n.network or "", n.subnetwork or "") for n in plan.networks]
            self.register_outputs({"networks": [n.k8s_name for n in plan.networks]})
            return
        prefix = f"{cluster_name}-{plan.kind.value}"
        for n in plan.gvnic:
            cidr = n.cidr or ""  # planned (stacks/plan/fabric.py): set on every network gpu-cluster creates
            vpc = gcp.compute.Network(
                f"{name}-{n.k8s_name}",
                name=f"{prefix}-{n.k8s_name}",
                project=project,
                auto_create_subnetworks=False,
                mtu=GVNIC_MTU,
                description=f"GPU NIC network {n.k8s_name} of the {plan.kind.display_name} pools of {cluster_name}",
                opts=child,
            )
            sub = gcp.compute.Subnetwork(
                f"{name}-{n.k8s_name}-subnet",
                name=f"{prefix}-{n.k8s_name}-sub",
                project=project,
                region=region,
                network=vpc.id,
                ip_cidr_range=cidr,
                opts=child,
            )
            gcp.compute.Firewall(
                f"{name}-{n.k8s_name}-internal",
                name=f"{prefix}-{n.k8s_name}-internal",
                project=project,
                network=vpc.name,
                direction="INGRESS",
                source_ranges=[cidr],
                allows=[{"protocol": "tcp"}, {"protocol": "udp"}, {"protocol": "icmp"}],
                description="GPU traffic between the nodes on this GPU NIC network",
                opts=child,
            )
            self.attachments.append(Attachment(n, vpc.name, sub.name))
        if plan.rdma:
            roce = gcp.compute.Network(
                f"{name}-roce",
                name=f"{prefix}-roce",
                project=project,
                auto_create_subnetworks=False,
                network_profile=roce_profile(project, zone),
                routing_mode="REGIONAL",
                mtu=ROCE_MTU,
                description=f"RoCE network of the {plan.kind.display_name} pools of {cluster_name} ({zone})",
                opts=child,
            )
            for n in plan.rdma:
                sub = gcp.compute.Subnetwork(
                    f"{name}-{n.k8s_name}-subnet",
                    name=f"{prefix}-{n.k8s_name}",
                    project=project,
                    region=region,
                    network=roce.id,
                    ip_cidr_range=n.cidr or "",
                    opts=child,
                )
                self.attachments.append(Attachment(n, roce.name, sub.name))
        self.register_outputs({"networks": [a.plan.k8s_name for a in self.attachments]})
