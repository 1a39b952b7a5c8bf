"""One view of a node pool for every rule: a GKE NodePool or an EKS NodeGroup read into the same fields.

The pool is named by its ``gpu-cluster/pool`` node label (the name the user wrote in the stack config), or by
the Pulumi resource name for pools another program created.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

from catalog import CapacityType, Catalog, Cloud, MachineType
from policies.resources import (
    EKS_NODE_GROUP,
    GKE_NODE_POOL,
    POOL_LABEL_KEY,
    gcp_region_of,
    is_gcp_zone,
)
from policies.rule import Resource
from stacks.plan.capacity_block import BLOCK_END_TAG, BLOCK_FEE_TAG, BLOCK_START_TAG
from stacks.plan.reservation import RESERVED_NODES_LABEL, RESERVED_NODES_TAG
from policies.values import UNKNOWN, as_dict, as_int, as_list, dig

NVIDIA_AMI_MARKERS = ("NVIDIA", "_GPU")
"""EKS AMI types with the NVIDIA driver: AL2023_*_NVIDIA, BOTTLEROCKET_*_NVIDIA, AL2_x86_64_GPU."""


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True)
class PoolView:
    resource: Resource
    cloud: Cloud
    name: str
    """The pool label, else the Pulumi resource name."""
    machine_types: tuple[str, ...]
    region: str | None
    zones: Any
    """Tuple of zones (GKE nodeLocations); () = the cluster's zones (GKE regional pool without nodeLocations);
    UNKNOWN when computed at deploy."""
    subnets: Any
    """EKS: number of subnets (one per AZ); GKE: None."""
    max_nodes: Any
    """Autoscaler maximum over all zones; None when the resource does not say; UNKNOWN at preview."""
    capacity: CapacityType
    taints: tuple[Taint, ...]
    accelerators: tuple[dict, ...]
    """GKE guestAccelerators as written (type, count)."""
    gpu_ami: bool
    """EKS: the AMI type ships the NVIDIA driver."""
    labels: dict
    """Kubernetes node labels the pool sets."""
    reserved_nodes: int | None = None
    """Reservation pools: nodes billed whether they run or not (tag / resource label); None when not declared."""
    capacity_block: bool = False
    """EKS: the node group runs on an EC2 Capacity Block (``capacityType: CAPACITY_BLOCK``)."""
    block_fee_usd: float | None = None
    """Capacity blocks: the declared upfront fee; None = unknown (cost rules fail closed)."""
    block_hours: float | None = None
    """Capacity blocks: the declared window's length in hours; None = unknown."""

    @property
    def block_usd_per_hour(self) -> float | None:
        """A capacity block's fee over its window, paid whether nodes run or not; None when either is unknown."""
        if self.block_fee_usd is None or not self.block_hours:
            return None
        return self.block_fee_usd / self.block_hours

    @property
    def subject(self) -> str:
        return f"pool '{self.name}'"

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.name, self.resource.name, self.resource.urn)

    def machine(self, cat: Catalog, machine_type: str | None = None) -> MachineType | None:
        """Catalog facts; for GKE N1 hosts the attached accelerators decide the GPU count."""
        mt = machine_type or (self.machine_types[0] if self.machine_types else None)
        if mt is None:
            return None
        acc = self.accelerators[0] if self.accelerators else {}
        count = as_int(acc.get("count"))
        return cat.resolve(
            self.cloud,
            mt,
            acc.get("type") if isinstance(acc.get("type"), str) else None,
            count if isinstance(count, int) else None,
        )

    def is_gpu(self, cat: Catalog) -> bool:
        if self.accelerators or self.gpu_ami:
            return True
        return any(cat.machines.get((self.cloud, m)) is not None for m in self.machine_types)


def pool_name(resource: Resource) -> str | None:
    """The pool a GKE NodePool or EKS NodeGroup is (its pool label, else its resource name); None for other types.
    Rules that only name the pool use this and need no catalog."""
    if resource.type == GKE_NODE_POOL:
        return _label(dig(resource.props, "nodeConfig", "labels"), resource.name)
    if resource.type == EKS_NODE_GROUP:
        return _label(resource.props.get("labels"), resource.name)
    return None


def pool_subject(resource: Resource) -> tuple[str, tuple[str, ...]] | None:
    """``pool 'h100'`` and the names a waiver may use, as ``PoolView.subject`` / ``keys`` give them."""
    name = pool_name(resource)
    return None if name is None else (f"pool '{name}'", (name, resource.name, resource.urn))


def pool_view(resource: Resource, cat: Catalog) -> PoolView | None:
    if resource.type == GKE_NODE_POOL:
        return _gke(resource, cat)
    if resource.type == EKS_NODE_GROUP:
        return _eks(resource)
    return None


def gpu_pools(resources: list[Resource], cat: Catalog) -> list[PoolView]:
    """One view per pool: a GKE pool of several racks (one node pool per rack, same pool label) or an EKS pool of
    several UltraServer blocks (one node group per block) is read as one pool whose maximum and reserved nodes, and
    block fee, are the groups' sums."""
    views = [v for v in (pool_view(r, cat) for r in resources) if v is not None and v.is_gpu(cat)]
    merged: dict[tuple[Cloud, str], PoolView] = {}
    out: list[PoolView] = []
    for v in views:
        first = merged.get((v.cloud, v.name))
        if first is None:
            merged[(v.cloud, v.name)] = v
            out.append(v)
            continue
        whole = replace(
            first,
            max_nodes=_sum(first.max_nodes, v.max_nodes),
            reserved_nodes=_sum(first.reserved_nodes, v.reserved_nodes),
            block_fee_usd=None
            if first.block_fee_usd is None or v.block_fee_usd is None
            else first.block_fee_usd + v.block_fee_usd,
        )
        merged[(v.cloud, v.name)] = whole
        out[out.index(first)] = whole
    return out


def _sum(a: Any, b: Any) -> Any:
    """Node counts of two rack node pools: unknown or missing on either side stays so."""
    return a + b if isinstance(a, int) and isinstance(b, int) else (a if not isinstance(a, int) else b)


def _label(labels: Any, fallback: str) -> str:
    """The pool name from the gpu-cluster/pool label, else ``fallback``."""
    value = as_dict(labels).get(POOL_LABEL_KEY)
    return value if isinstance(value, str) and value else fallback


def _taints(items: Any) -> tuple[Taint, ...]:
    out = []
    for t in as_list(items):
        if isinstance(t, dict):
            out.append(Taint(str(t.get("key", "")), str(t.get("value", "") or ""), str(t.get("effect", ""))))
    return tuple(out)


def _gke(r: Resource, cat: Catalog) -> PoolView:
    p = r.props
    location = p.get("location")
    region = gcp_region_of(location) or r.provider.get("region")
    node_locations = p.get("nodeLocations")
    if node_locations is UNKNOWN:
        zones: Any = UNKNOWN
    elif node_locations:
        zones = tuple(str(z) for z in node_locations)
    elif is_gcp_zone(location):
        zones = (location,)
    else:
        zones = ()
    zone_count = len(zones) if isinstance(zones, tuple) and zones else len(cat.zones(Cloud.GCP, region or ""))
    spot = dig(p, "nodeConfig", "spot") is True or dig(p, "nodeConfig", "preemptible") is True
    flex = dig(p, "nodeConfig", "flexStart") is True
    affinity = dig(p, "nodeConfig", "reservationAffinity", "consumeReservationType")
    capacity = (
        CapacityType.SPOT
        if spot
        else CapacityType.FLEX_START
        if flex
        else CapacityType.RESERVATION
        if affinity == "SPECIFIC_RESERVATION"
        else CapacityType.ON_DEMAND
    )
    machine = dig(p, "nodeConfig", "machineType")
    return PoolView(
        resource=r,
        cloud=Cloud.GCP,
        name=pool_name(r) or r.name,
        machine_types=(machine,) if isinstance(machine, str) else (),
        region=region,
        zones=zones,
        subnets=None,
        max_nodes=_gke_max_nodes(p, zone_count),
        capacity=capacity,
        taints=_taints(dig(p, "nodeConfig", "taints")),
        accelerators=tuple(a for a in as_list(dig(p, "nodeConfig", "guestAccelerators")) if isinstance(a, dict)),
        gpu_ami=False,
        labels=as_dict(dig(p, "nodeConfig", "labels")),
        reserved_nodes=_positive_int(as_dict(dig(p, "nodeConfig", "resourceLabels")).get(RESERVED_NODES_LABEL)),
    )


def _gke_max_nodes(p: dict, zone_count: int) -> Any:
    """Total autoscaler maximum: total limits win; per-zone limits and fixed counts multiply by the zones."""
    auto = p.get("autoscaling")
    if auto is UNKNOWN:
        return UNKNOWN
    total = as_int(dig(p, "autoscaling", "totalMaxNodeCount"))
    if total is not None:
        return total
    per_zone = as_int(dig(p, "autoscaling", "maxNodeCount"))
    if per_zone is UNKNOWN:
        return UNKNOWN
    if per_zone is not None:
        return per_zone * max(zone_count, 1)
    fixed = as_int(p.get("nodeCount"))
    if fixed is None:
        fixed = as_int(p.get("initialNodeCount"))
    if fixed is UNKNOWN or fixed is None:
        return fixed
    return fixed * max(zone_count, 1)


def _eks(r: Resource) -> PoolView:
    p = r.props
    region = p.get("region") if isinstance(p.get("region"), str) else r.provider.get("region")
    cap = p.get("capacityType")
    capacity = (
        CapacityType.SPOT
        if cap == "SPOT"
        else CapacityType.RESERVATION
        if cap == "CAPACITY_BLOCK"
        else CapacityType.ON_DEMAND
    )
    subnets = p.get("subnetIds")
    ami = p.get("amiType")
    tags = as_dict(p.get("tags"))
    return PoolView(
        resource=r,
        cloud=Cloud.AWS,
        name=pool_name(r) or r.name,
        machine_types=tuple(str(t) for t in as_list(p.get("instanceTypes")) if isinstance(t, str)),
        region=region if isinstance(region, str) else None,
        zones=UNKNOWN,
        subnets=len(subnets) if isinstance(subnets, list) else UNKNOWN if subnets is UNKNOWN else None,
        max_nodes=as_int(dig(p, "scalingConfig", "maxSize")),
        capacity=capacity,
        taints=_taints(p.get("taints")),
        accelerators=(),
        gpu_ami=isinstance(ami, str) and any(m in ami for m in NVIDIA_AMI_MARKERS),
        labels=as_dict(p.get("labels")),
        reserved_nodes=_positive_int(tags.get(RESERVED_NODES_TAG)),
        capacity_block=cap == "CAPACITY_BLOCK",
        block_fee_usd=_positive_float(tags.get(BLOCK_FEE_TAG)),
        block_hours=_hours(tags.get(BLOCK_START_TAG), tags.get(BLOCK_END_TAG)),
    )


def _positive_int(value: Any) -> int | None:
    try:
        number = int(str(value))
    except ValueError:
        return None
    return number if number > 0 else None


def _positive_float(value: Any) -> float | None:
    try:
        number = float(str(value))
    except ValueError:
        return None
    return number if number > 0 else None


def _hours(start: Any, end: Any) -> float | None:
    """Hours between two ISO 8601 tag values; None when either is missing or malformed."""
    try:
        hours = (dt.datetime.fromisoformat(str(end)) - dt.datetime.fromisoformat(str(start))).total_seconds() / 3600
    except (TypeError, ValueError):
        return None
    return hours if hours > 0 else None
