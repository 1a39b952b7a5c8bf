"""A pool against the catalog: machine type and GPUs, zones of the region, and a known price.

``pool`` is the pool's scope (``issues.pool(i, name)``), so every message names the pool.
"""
from __future__ import annotations

from catalog import CapacityType, Catalog, Cloud, MachineType
from stacks.spec import ClusterSpec, NodePool
from validation.issues import Issues, allowed_list, choice_fix
from validation.names import CLOUD_NAME, other_cloud


def check_machine(pool: Issues, cat: Catalog, cloud: Cloud, i: int, spec: NodePool) -> MachineType | None:
    """The machine type and its GPUs; returns what the catalog resolves them to, or None after reporting why not."""
    known = cat.machine_types(cloud)
    if spec.machine_type not in known:
        _report_unknown_machine(pool, cat, cloud, i, spec.machine_type, known)
        return None
    fixed = cat.machines.get((cloud, spec.machine_type))
    acc = spec.accelerator
    if fixed is not None:
        wrong = False
        if acc is not None and acc.type != fixed.accelerator:
            wrong = True
            pool.error(("accelerator", "type"), f"{spec.machine_type} comes with {fixed.accelerator} GPUs; "
                       f"{acc.type} cannot be attached to it", acc.type, allowed=fixed.accelerator,
                       fix="remove accelerator (the catalog knows it) or pick a machine type for that GPU")
        if acc is not None and acc.count is not None and acc.count != fixed.gpus:
            wrong = True
            pool.error(("accelerator", "count"), f"{spec.machine_type} has exactly {fixed.gpus} × "
                       f"{fixed.accelerator}", acc.count, allowed=str(fixed.gpus),
                       fix="remove accelerator.count, or pick the machine size with that many GPUs")
        return None if wrong else fixed
    choices = cat.attachable_gpus(cloud, spec.machine_type)
    names = [a.accelerator for a in choices]
    if acc is None:
        pool.error("accelerator", f"{spec.machine_type} has no built-in GPU; say which GPU to attach",
                   allowed=allowed_list(names), fix="add accelerator: {type: nvidia-tesla-t4, count: 1}")
        return None
    gpu = cat.attachable.get((cloud, acc.type))
    if gpu is None or spec.machine_type not in gpu.host_machine_types:
        pool.error(("accelerator", "type"), f"GPU cannot be attached to {spec.machine_type}", acc.type,
                   allowed=allowed_list(names), fix=choice_fix("accelerator.type", acc.type, names))
        return None
    if acc.count is None:
        pool.error(("accelerator", "count"), f"say how many {acc.type} GPUs to attach to {spec.machine_type}",
                   allowed=", ".join(map(str, gpu.allowed_counts)),
                   fix=f"add accelerator.count: {gpu.allowed_counts[0]} (or another allowed count)")
        return None
    if acc.count not in gpu.allowed_counts:
        pool.error(("accelerator", "count"), f"{acc.type} attaches in fixed counts", acc.count,
                   allowed=", ".join(map(str, gpu.allowed_counts)), fix="pick one of the allowed counts")
        return None
    return cat.resolve(cloud, spec.machine_type, acc.type, acc.count)


def _report_unknown_machine(pool: Issues, cat: Catalog, cloud: Cloud, i: int, machine_type: str,
                            known: list[str]) -> None:
    other = other_cloud(cloud)
    if machine_type in cat.machine_types(other):
        problem = f"{machine_type} is {CLOUD_NAME[other]} machine type; this stack's cloud is {cloud.value}"
        theirs = cat.machines.get((other, machine_type))
        same = [m.machine_type for m in sorted(cat.machines.values(), key=lambda m: m.machine_type)
                if theirs is not None and m.cloud == cloud and m.gpu_model == theirs.gpu_model
                and m.gpus == theirs.gpus and any(k[:2] == (cloud, m.machine_type) for k in cat.prices)]
        fix = (f"use {CLOUD_NAME[cloud]} type with the same GPUs ({theirs.gpus} × {theirs.gpu_model.value}): "
               f"{', '.join(same)}" if same and theirs is not None
               else f"pick {CLOUD_NAME[cloud]} machine type from the allowed list")
        fix += f"; or move this pool to {CLOUD_NAME[other]} stack"
    else:
        problem = f"unknown GPU machine type for {cloud.value}"
        fix = choice_fix(f"nodePools[{i}].machineType", machine_type, known, ", or add it to catalog/data/machines.csv")
    pool.error("machineType", problem, machine_type, allowed=allowed_list(known), fix=fix)


def check_zones(pool: Issues, cat: Catalog, cloud: Cloud, region: str, cluster: ClusterSpec | None,
                spec: NodePool) -> None:
    zones = cat.zones(cloud, region)
    if not zones:
        return  # unknown region is reported once, at gpu-cluster:region
    for j, zone in enumerate(spec.zones):
        if zone not in zones:
            pool.error(("zones", j), f"not a zone of region {region}", zone, allowed=allowed_list(zones),
                       fix=choice_fix("the zone", zone, zones))
        elif cloud == Cloud.AWS and cluster is not None and zone not in cluster.subnets:
            pool.error(("zones", j), "no subnet is declared for this Availability Zone", zone,
                       allowed=allowed_list(sorted(cluster.subnets)) or "none declared",
                       fix=f"add cluster.subnets.{zone}: <subnet-id>, or use a zone that has one")
    if len(set(spec.zones)) != len(spec.zones):
        pool.error("zones", "a zone is listed twice", spec.zones, allowed="each zone once", fix="remove the duplicate")
    for prefix, avail in ((k[1], v) for k, v in cat.zone_availability.items() if k[0] == cloud):
        if spec.machine_type.startswith(prefix):
            missing = [z for z in spec.zones if z in zones and z not in avail.zones]
            if missing:
                pool.warn("zones", f"the catalog (as of {avail.as_of}) did not see {spec.machine_type} "
                          f"in {', '.join(missing)}", spec.zones,
                          allowed=allowed_list(z for z in avail.zones if z in zones) or f"no zone of {region}",
                          fix="check `gcloud compute machine-types list --filter=name=" + spec.machine_type
                          + "`; capacity may have moved since")


def check_price(pool: Issues, cat: Catalog, cloud: Cloud, region: str, spec: NodePool, machine: MachineType) -> None:
    """Unknown is not $0: a pool without a dated price for its region and capacity type is refused."""
    capacity = spec.capacity.type
    if not cat.zones(cloud, region) or cat.node_price(machine, region, capacity) is not None:
        return
    if capacity == CapacityType.FLEX_START and cloud == Cloud.AWS:
        return  # no such capacity on EKS: reported once, at capacity.type
    kind = capacity.value if capacity in (CapacityType.SPOT, CapacityType.FLEX_START) else "on-demand"
    article = "an" if kind == "on-demand" else "a"
    elsewhere = cat.priced_regions(machine, capacity)
    if elsewhere:
        allowed = f"regions with {article} {kind} price: {allowed_list(elsewhere)}"
    else:
        other = CapacityType.SPOT if capacity in (CapacityType.ON_DEMAND, CapacityType.RESERVATION) \
            else CapacityType.ON_DEMAND
        other_regions = cat.priced_regions(machine, other)
        allowed = f"no region has {article} {kind} price" + (
            f"; {other.value} is priced in {allowed_list(other_regions)}" if other_regions
            else f"; the catalog has no price for {spec.machine_type} at all")
    reservation = " (reservations are billed at the on-demand rate)" if capacity == CapacityType.RESERVATION else ""
    price_file = "flex-start-prices.csv" if capacity == CapacityType.FLEX_START else "prices.csv"
    pool.error("machineType", f"no {kind} price for {spec.machine_type} in {region}{reservation}; refusing to guess "
               "(unknown is not $0)", spec.machine_type, allowed=allowed,
               fix=f"add a dated, sourced row to catalog/data/{price_file}, or pick another region, capacity type or "
               "machine type")
