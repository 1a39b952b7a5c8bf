"""topology-fabric-shape: a GKE pool that attaches GPU fabric networks attaches them in the shape its machine needs:
TCPX 4 and TCPXO 8 gVNIC networks, each its own VPC, and no more (an extra gVNIC network on A3 Mega takes a GPU NIC's
PCI slot); RDMA 1 gVNIC network, then 8 subnets of one RoCE VPC. Too few is topology-fabric-missing's finding."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from catalog.fabric import FabricKind, load_fabric_catalog
from policies.findings import Finding, listing
from policies.pools import pool_view
from policies.resources import GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import as_dict, as_list, dig

ID = "topology-fabric-shape"


def check(resource: Resource, cfg: Config, cat: Catalog) -> Iterable[Finding]:
    view = pool_view(resource, cat)
    if view is None or view.cloud != Cloud.GCP or not view.machine_types:
        return
    fabric = load_fabric_catalog().for_machine(Cloud.GCP, view.machine_types[0])
    nets = [
        as_dict(n).get("network") for n in as_list(dig(resource.props, "networkConfig", "additionalNodeNetworkConfigs"))
    ]
    if fabric is None or len(nets) < fabric.extra_networks:
        return
    want, name = fabric.extra_networks, fabric.kind.display_name
    shape = (
        f"1 gVNIC network, then 8 subnets of one RoCE VPC ({want} in all)"
        if fabric.kind == FabricKind.RDMA
        else f"exactly {want} gVNIC networks, each its own VPC"
    )
    fix = "attach the networks gpu-cluster's fabric mode auto creates, or list them in this order with mode existing"
    where = "networkConfig.additionalNodeNetworkConfigs"
    if len(nets) > want:
        extra = len(nets) - want
        slot = (
            ", so an extra gVNIC network takes a GPU NIC's PCI slot and leaves 7 of 8 GPUs on the fabric"
            if fabric.kind == FabricKind.TCPXO
            else ""
        )
        yield Finding(
            view.subject,
            f"{fabric.machine_type} with {name} attaches {extra} more network"
            f"{'s' if extra != 1 else ''} than it has NICs for{slot}",
            observed=f"{len(nets)} networks in {where}",
            required=shape,
            fix=fix,
            keys=view.keys,
        )
        return
    gvnic, rdma = nets[: fabric.gvnic_networks], nets[fabric.gvnic_networks :]
    if len(set(gvnic)) != len(gvnic):
        twice = sorted({str(n) for n in gvnic if gvnic.count(n) > 1})
        yield Finding(
            view.subject,
            f"{fabric.machine_type} attaches one VPC to several gVNIC NICs, which breaks the "
            f"per-NIC routing {name} expects",
            observed=f"{where} lists " + ", ".join(f"{n} {gvnic.count(n)} times" for n in twice),
            required=shape,
            fix=fix,
            keys=view.keys,
        )
    elif fabric.kind == FabricKind.RDMA and (len(set(rdma)) != 1 or set(rdma) & set(gvnic)):
        shared = sorted({str(n) for n in set(rdma) & set(gvnic)})
        yield Finding(
            view.subject,
            f"the {len(rdma)} RDMA NICs of {fabric.machine_type} are not all on one RoCE VPC "
            "of their own, so those outside it cannot do RDMA",
            observed=f"RDMA entries of {where} on {len(set(rdma))} network"
            f"{'s' if len(set(rdma)) != 1 else ''} ({listing(sorted({str(n) for n in rdma}))})"
            + (f"; {listing(shared)} also carries a gVNIC NIC" if shared else ""),
            required=shape,
            fix=fix,
            keys=view.keys,
        )


RULE = register(
    Rule(
        id=ID,
        title="GPU fabric networks have the machine's shape",
        category=Category.TOPOLOGY,
        description="A GKE fabric pool attaches its networks in the machine's shape: TCPX 4, TCPXO 8 separate VPCs; RDMA "
        "1 gVNIC + 8 RoCE subnets.",
        why=(
            "GKE maps each additional network to one NIC in order. An A3 Mega node with a ninth gVNIC network loses a "
            "GPU NIC's slot (AICR GKE TCPXO guide; Slinky's a3mega helper refuses anything but 9 networks), two NICs on "
            "one VPC break the per-NIC routing TCPX/TCPXO expects, and RDMA NICs work only in the RoCE VPC."
        ),
        remediation=(
            "1. For a gpu-cluster stack, use fabric mode auto, or mode existing with the networks in the order "
            "the docs give. 2. Otherwise attach exactly the networks GKE's GPUDirect guide lists for the "
            "machine."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL,),
        check=check,
        reads_catalog=True,
    ),
    order=2050,
)
