"""topology-multi-node-placement: multi-node GPU pools sit in one zone/AZ with compact placement (GKE) or a
cluster placement group (EKS). EKS pools that launch into a capacity reservation need no new placement group: a
Capacity Block is placed close together in an EC2 UltraCluster already (EC2 API reference, CapacityBlock), and a
targeted On-Demand Capacity Reservation serves only the placement group it was created in, if any ("Use Capacity
Reservations with cluster placement groups", EC2 user guide), so a new group would break the launch."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud, GpuDirect
from policies.findings import Finding, listing
from policies.links import launch_template_of, placement_group_of
from policies.multinode import MIN_NODES_SCHEMA, declared_multi_node, is_multi_node
from policies.pools import PoolView, gpu_pools
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL, LAUNCH_TEMPLATE, PLACEMENT_GROUP
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import UNKNOWN, dig

ID = "topology-multi-node-placement"
FABRIC = {
    GpuDirect.TCPX: "GPUDirect-TCPX",
    GpuDirect.TCPXO: "GPUDirect-TCPXO",
    GpuDirect.RDMA: "GPUDirect RDMA",
    GpuDirect.EFA_RDMA: "EFA",
}
WAIVE = f"or waive {ID} for this pool if it only runs single-node jobs"


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    for view in gpu_pools(resources, cat):
        machine = view.machine(cat)
        template = launch_template_of(view.resource, view.name, resources) if view.cloud == Cloud.AWS else None
        if not is_multi_node(view, machine, template, int(cfg["minNodes"])):
            continue
        size = f"up to {view.max_nodes} nodes" if isinstance(view.max_nodes, int) else "autoscaled"
        if declared_multi_node(view, template):
            what = f"this multi-node {view.machine_types[0]} pool ({size})"
        else:
            fabric = FABRIC.get(machine.gpudirect, "a GPU fabric") if machine is not None else "a GPU fabric"
            what = f"this {view.machine_types[0]} pool (HGX-class with {fabric}, {size})"
        if view.cloud == Cloud.GCP:
            yield from _gke(view, what)
        else:
            yield from _eks(view, what, template, resources)


Part = tuple[str, str, str, str, bool]
"""(problem, observed, required, fix, whether waiving the rule is an alternative to the fix)."""


def _merged(view: PoolView, what: str, parts: list[Part]) -> Iterable[Finding]:
    """One finding per pool. ``parts`` in the order their fixes must be applied: the zone first, since gpu-cluster
    refuses multiNode: true while a pool spans zones."""
    if not parts:
        return
    problem = ", and ".join(p[0] for p in parts)
    observed = "; ".join(p[1] for p in parts)
    required = "; ".join(p[2] for p in parts)
    fix = parts[0][3] if len(parts) == 1 else "first " + ", then ".join(p[3] for p in parts)
    if any(p[4] for p in parts):
        fix = f"{fix}, {WAIVE}"
    yield Finding(
        view.subject,
        f"{what} {problem}",
        observed=observed,
        required=required,
        fix=fix,
        keys=view.keys,
        urn=view.resource.urn,
    )


def _zones(zones: tuple) -> str:
    return listing(zones) if len(zones) != 2 else f"{zones[0]} and {zones[1]}"


def _gke(view: PoolView, what: str) -> Iterable[Finding]:
    zones = view.zones
    spread = zones is not UNKNOWN and len(zones) != 1
    placement = dig(view.resource.props, "placementPolicy", "type")
    # GKE refuses compact placement on queued-provisioning GPU pools; DWS keeps each request in one zone
    queued = dig(view.resource.props, "queuedProvisioning", "enabled") is True
    loose = placement is not UNKNOWN and placement != "COMPACT" and not queued
    where = problem = ""
    if spread:
        problem = f"spans {len(zones)} zones" if zones else "spans every zone of the cluster"
        where = f"nodeLocations {_zones(zones)}" if zones else "nodeLocations unset (every zone of the cluster)"
    first = zones[0] if spread and zones else "<zone>"
    unset = f"placementPolicy.type {placement or 'unset'}"
    if spread and loose:
        parts: list[Part] = [
            (
                f"{problem} and has no compact placement",
                f"{where}; {unset}",
                "one zone and placementPolicy.type COMPACT (compact placement puts the nodes on one "
                "low-latency network block and cannot span zones)",
                f"first keep one zone (gpu-cluster: zones: [{first}]), then set multiNode: true on the "
                "pool (gpu-cluster adds compact placement)",
                True,
            )
        ]
    elif spread:
        parts = [
            (
                problem,
                where,
                "exactly one zone (compact placement cannot span zones)",
                f"keep one zone (gpu-cluster: zones: [{first}] and multiNode: true)",
                True,
            )
        ]
    elif loose:
        parts = [
            (
                "has no compact placement",
                unset,
                "placementPolicy.type COMPACT, so nodes share a low-latency network block",
                "set multiNode: true on the pool (gpu-cluster adds compact placement in one zone)",
                True,
            )
        ]
    else:
        parts = []
    yield from _merged(view, what, parts)


def _eks(view: PoolView, what: str, template: Resource | None, resources: list[Resource]) -> Iterable[Finding]:
    parts: list[Part] = []
    group_name = dig(template.props, "placement", "groupName") if template is not None else None
    reserved = template is not None and not group_name and _reserved(view, template)
    no_group = not group_name and not reserved  # the reservation decides placement (see the module docstring)
    if isinstance(view.subnets, int) and view.subnets != 1:
        parts.append(
            (
                "spans Availability Zones",
                f"{view.subnets} subnets in subnetIds",
                "one subnet in one Availability Zone (a cluster placement group cannot span AZs)",
                "keep one Availability Zone (gpu-cluster: one entry in zones"
                f"{')' if no_group else ' and multiNode: true)'}",
                True,
            )
        )
    if no_group:
        where = (
            "no launch template"
            if template is None
            else f"launch template '{template.name}' without placement.groupName"
        )
        parts.append(
            (
                "has no cluster placement group",
                where,
                "a launch template placing nodes in a placement group with strategy cluster",
                "set multiNode: true on the pool (gpu-cluster creates the placement group and EFA interfaces)",
                True,
            )
        )
    elif group_name and template is not None:
        group = placement_group_of(template, view.name, resources)
        strategy = group.props.get("strategy") if group is not None else None
        if group is not None and isinstance(strategy, str) and strategy != "cluster":
            parts.append(
                (
                    "uses a placement group that does not pack its nodes together",
                    f"placement group '{group.name}' with strategy {strategy}",
                    "strategy cluster (nodes packed close together for EFA)",
                    'set strategy "cluster" on the placement group',
                    False,
                )
            )
    yield from _merged(view, what, parts)


def _reserved(view: PoolView, template: Resource) -> bool:
    """Nodes launch into a capacity block or a targeted capacity reservation (ID or reservation group)."""
    if view.resource.props.get("capacityType") == "CAPACITY_BLOCK":
        return True
    target = dig(template.props, "capacityReservationSpecification", "capacityReservationTarget")
    return isinstance(target, dict) and any(
        isinstance(target.get(k), str) and target.get(k)
        for k in ("capacityReservationId", "capacityReservationResourceGroupArn")
    )


RULE = register(
    Rule(
        id=ID,
        title="Multi-node pools are placed compactly in one zone",
        category=Category.TOPOLOGY,
        description="Multi-node GPU pools are in one zone or Availability Zone, with compact placement (GKE) or a "
        "cluster placement group or capacity reservation (EKS).",
        why=(
            "Multi-node training is bound by the slowest link between nodes. GPUDirect-TCPX/TCPXO, GPUDirect RDMA "
            "and EFA only deliver their bandwidth and latency between nodes placed close together, which needs one "
            "zone and compact placement (GKE) or a cluster placement group (EKS). A pool counts as multi-node when "
            "it asks for such placement, or when it is an HGX-class machine (8+ GPUs and a GPU fabric) that can "
            "reach minNodes nodes: those machines are bought for jobs that span nodes. On EKS a capacity reservation "
            "places the nodes instead: Capacity Blocks sit in EC2 UltraClusters, and an On-Demand Capacity "
            "Reservation serves only the placement group it was created in (if any), so such pools need no new "
            "placement group. On GKE a queued-provisioning pool (DWS) cannot have compact placement (GKE refuses it on "
            "GPU pools) and needs only one zone."
        ),
        remediation=(
            "1. For a gpu-cluster stack, set multiNode: true on the pool and keep exactly one zone: the "
            "components add compact placement (GKE) or a cluster placement group and EFA (EKS). 2. For "
            "other programs, set placementPolicy.type COMPACT and a single node location (GKE), or a launch "
            "template with placement.groupName of a strategy=cluster placement group and one subnet (EKS); "
            "EKS pools on a capacity block or reservation keep the reservation's placement (gpu-cluster: "
            "capacity.placementGroup names an ODCR's cluster placement group). "
            "3. If the pool only runs single-node jobs, waive this rule for it with that reason."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP, LAUNCH_TEMPLATE, PLACEMENT_GROUP),
        check=check,
        reads_catalog=True,
        stack=True,
        config={"minNodes": MIN_NODES_SCHEMA},
    ),
    order=2020,
)
