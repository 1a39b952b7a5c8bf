"""topology-fabric-missing: a multi-node GKE pool on a fabric-capable machine (A3 High / Mega / Ultra, A4) attaches
its GPU fabric: the extra networks GPUDirect-TCPX/TCPXO/RDMA needs, or GKE-managed accelerator networking
(``acceleratorNetworkProfile: auto``). EKS pools: EFA is checked by topology-efa-interfaces."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from catalog.fabric import load_fabric_catalog
from policies.findings import Finding, shown
from policies.multinode import declared_multi_node
from policies.pools import pool_view
from policies.resources import GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import as_list, dig

ID = "topology-fabric-missing"
GKE_MANAGED = "auto"
"""``networkConfig.acceleratorNetworkProfile: auto``: GKE creates and attaches the accelerator networks itself."""


def check(resource: Resource, cfg: Config, cat: Catalog) -> Iterable[Finding]:
    view = pool_view(resource, cat)
    if view is None or view.cloud != Cloud.GCP:
        return
    fabric = load_fabric_catalog().for_machine(Cloud.GCP, view.machine_types[0]) if view.machine_types else None
    # declared multi-node (compact placement): an HGX pool that only looks multi-node (spread over zones, no compact
    # placement) is topology-multi-node-placement's finding; its fix (multiNode: true) brings the fabric too
    if fabric is None or not declared_multi_node(view, None):
        return
    profile = dig(resource.props, "networkConfig", "acceleratorNetworkProfile")
    if profile == GKE_MANAGED:
        return
    attached = len(as_list(dig(resource.props, "networkConfig", "additionalNodeNetworkConfigs")))
    want = fabric.extra_networks
    if attached >= want:
        return
    has = "no" if attached == 0 else f"{attached} of the {want}"
    networks = "no networks" if attached == 0 else f"{attached} network{'s' if attached != 1 else ''}"
    yield Finding(
        view.subject,
        f"this multi-node {fabric.machine_type} pool attaches {has} {fabric.kind.display_name} networks, so NCCL "
        f"between its nodes runs over the primary NIC and gives up {fabric.nominal_gbps_per_node:,} Gbps per node",
        observed=f"{networks} in networkConfig.additionalNodeNetworkConfigs, networkConfig.acceleratorNetworkProfile "
        f"{shown(profile)}",
        required=f"{want} networks in networkConfig.additionalNodeNetworkConfigs, or "
        f"networkConfig.acceleratorNetworkProfile {GKE_MANAGED}",
        fix="remove `fabric: {mode: off}` from the pool (gpu-cluster then creates the networks, multi-networking, "
        f"the NCCL plugin and wires the jobs), or attach your own with fabric mode existing; waive {ID} for this "
        "pool only if it never runs jobs across nodes",
        keys=view.keys,
    )


RULE = register(
    Rule(
        id=ID,
        title="Multi-node GPU pools have their fabric",
        category=Category.TOPOLOGY,
        description="A compact-placement GKE pool on an A3/A4 machine attaches its GPUDirect fabric's networks (TCPX 4, "
        "TCPXO 8, RDMA 1 + 8) or GKE-managed accelerator networking.",
        why=(
            "Without its fabric a multi-node job all-reduces over the primary NIC: roughly 4 GB/s instead of the "
            "~340 GB/s NVIDIA measures with GPUDirect-TCPXO on A3 Mega (AICR GKE TCPXO guide). The job runs, just "
            "many times slower, and nothing reports it. The network count per machine comes from the catalog."
        ),
        remediation=(
            "1. For a gpu-cluster stack, leave the pool's fabric at mode auto (the default for multiNode: "
            "true) or bring your own networks with mode existing. 2. Otherwise attach the fabric's networks "
            "through networkConfig.additionalNodeNetworkConfigs (and install the NCCL plugin), or set "
            "networkConfig.acceleratorNetworkProfile: auto where GKE supports it. 3. Waive the rule for a pool "
            "that never runs jobs across nodes."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL,),
        check=check,
        reads_catalog=True,
    ),
    order=2040,
)
