"""topology-multi-node-placement: multi-node GPU pools sit in one zone/AZ with compact placement (GKE) or a
cluster placement group (EKS)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Cloud, GpuDirect, load_catalog
from policies.findings import Finding, listing
from policies.links import launch_template_of, placement_group_of
from policies.multinode import MIN_NODES_SCHEMA, declared_multi_node, is_multi_node
from policies.pools import PoolView, gpu_pools
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL, LAUNCH_TEMPLATE, PLACEMENT_GROUP
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN, dig

ID = "topology-multi-node-placement"
FABRIC = {GpuDirect.TCPX: "GPUDirect-TCPX", GpuDirect.TCPXO: "GPUDirect-TCPXO", GpuDirect.RDMA: "GPUDirect RDMA",
          GpuDirect.EFA_RDMA: "EFA"}
WAIVE = f"or waive {ID} for this pool if it only runs single-node jobs"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    cat = load_catalog()
    for view in gpu_pools(resources, cat):
        machine = view.machine(cat)
        template = launch_template_of(view.resource, view.name, resources) if view.cloud == Cloud.AWS else None
        if not is_multi_node(view, machine, template, int(cfg["minNodes"])):
            continue
        size = f"up to {view.max_nodes} nodes" if isinstance(view.max_nodes, int) else "autoscaled"
        if declared_multi_node(view, template):
            what = f"this multi-node {view.machine_types[0]} pool ({size})"
        else:
            fabric = FABRIC.get(machine.gpudirect, "a GPU fabric")
            what = f"this {view.machine_types[0]} pool (HGX-class with {fabric}, {size})"
        if view.cloud == Cloud.GCP:
            yield from _gke(view, what)
        else:
            yield from _eks(view, what, template, resources)


def _gke(view: PoolView, what: str) -> Iterable[Finding]:
    urn, keys = view.resource.urn, view.keys
    zones = view.zones
    if zones is not UNKNOWN and len(zones) != 1:
        spread = (f"spans {len(zones)} zones ({listing(zones)})" if zones
                  else "has no node locations, so it spans every zone of the cluster")
        first = zones[0] if zones else "<zone>"
        yield Finding(view.subject, f"{what} {spread}",
                      "exactly one zone: compact placement cannot span zones",
                      f"keep one zone (gpu-cluster: zones: [{first}] and multiNode: true), {WAIVE}", keys, urn)
    placement = dig(view.resource.props, "placementPolicy", "type")
    if placement is not UNKNOWN and placement != "COMPACT":
        yield Finding(view.subject, f"{what} has no compact placement (placementPolicy.type is "
                      f"{placement or 'unset'})", "placementPolicy.type COMPACT, so nodes share a low-latency "
                      "network block", f"set multiNode: true on the pool (gpu-cluster adds compact placement in one "
                      f"zone), {WAIVE}", keys, urn)


def _eks(view: PoolView, what: str, template: Resource | None, resources: list[Resource]) -> Iterable[Finding]:
    urn, keys = view.resource.urn, view.keys
    if isinstance(view.subnets, int) and view.subnets != 1:
        yield Finding(view.subject, f"{what} uses {view.subnets} subnets",
                      "one subnet in one Availability Zone: a cluster placement group cannot span AZs",
                      f"keep one Availability Zone (gpu-cluster: one entry in zones and multiNode: true), {WAIVE}",
                      keys, urn)
    group_name = dig(template.props, "placement", "groupName") if template is not None else None
    if template is None or not group_name:
        where = "has no launch template" if template is None else "sets no placement.groupName in its launch template"
        yield Finding(view.subject, f"{what} {where}, so it has no cluster placement group",
                      "a launch template placing nodes in a placement group with strategy cluster",
                      f"set multiNode: true on the pool (gpu-cluster creates the placement group and EFA "
                      f"interfaces), {WAIVE}", keys, urn)
        return
    group = placement_group_of(template, view.name, resources)
    strategy = group.props.get("strategy") if group is not None else None
    if isinstance(strategy, str) and strategy != "cluster":
        yield Finding(view.subject, f"{what} uses placement group '{group.name}' with strategy {strategy}",
                      "strategy cluster (nodes packed close together for EFA)",
                      "set strategy \"cluster\" on the placement group", keys, urn)


RULE = Rule(
    id=ID, title="Multi-node pools are placed compactly in one zone", category=Category.TOPOLOGY,
    description="Multi-node GPU pools are in one zone or Availability Zone, with compact placement (GKE) or a "
                "cluster placement group (EKS).",
    why=("Multi-node training is bound by the slowest link between nodes. GPUDirect-TCPX/TCPXO, GPUDirect RDMA "
         "and EFA only deliver their bandwidth and latency between nodes placed close together, which needs one "
         "zone and compact placement (GKE) or a cluster placement group (EKS). A pool counts as multi-node when "
         "it asks for such placement, or when it is an HGX-class machine (8+ GPUs and a GPU fabric) that can "
         "reach minNodes nodes: those machines are bought for jobs that span nodes."),
    remediation=("1. For a gpu-cluster stack, set multiNode: true on the pool and keep exactly one zone: the "
                 "components add compact placement (GKE) or a cluster placement group and EFA (EKS). 2. For "
                 "other programs, set placementPolicy.type COMPACT and a single node location (GKE), or a launch "
                 "template with placement.groupName of a strategy=cluster placement group and one subnet (EKS). "
                 "3. If the pool only runs single-node jobs, waive this rule for it with that reason."),
    severity=Severity.HIGH, enforcement=EnforcementLevel.MANDATORY,
    applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP, LAUNCH_TEMPLATE, PLACEMENT_GROUP), check=check, stack=True,
    config={"minNodes": MIN_NODES_SCHEMA},
)
