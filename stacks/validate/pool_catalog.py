"""A pool against the catalog: machine type and GPUs, zones of the region, and a known price.

``pool`` is the pool's scope (``issues.pool(i, name)``), so every message names the pool.
"""

from __future__ import annotations

from catalog import CapacityType, Catalog, Cloud, MachineType, SoldAs
from stacks.plan.reservation import is_capacity_block
from stacks.spec.capacity import AwsReservationKind
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues, allowed_list, choice_fix
from stacks.validate.names import CLOUD_NAME, other_cloud


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
            pool.error(
                ("accelerator", "type"),
                f"{spec.machine_type} comes with {fixed.accelerator} GPUs; {acc.type} cannot be attached to it",
                acc.type,
                allowed=fixed.accelerator,
                fix="remove accelerator (the catalog knows it) or pick a machine type for that GPU",
            )
        if acc is not None and acc.count is not None and acc.count != fixed.gpus:
            wrong = True
            pool.error(
                ("accelerator", "count"),
                f"{spec.machine_type} has exactly {fixed.gpus} × {fixed.accelerator}",
                acc.count,
                allowed=str(fixed.gpus),
                fix="remove accelerator.count, or pick the machine size with that many GPUs",
            )
        if not wrong:
            check_sold_as(pool, cat, cloud, spec)
        return None if wrong else fixed
    choices = cat.attachable_gpus(cloud, spec.machine_type)
    names = [a.accelerator for a in choices]
    if acc is None:
        pool.error(
            "accelerator",
            f"{spec.machine_type} has no built-in GPU; say which GPU to attach",
            allowed=allowed_list(names),
            fix="add accelerator: {type: nvidia-tesla-t4, count: 1}",
        )
        return None
    gpu = cat.attachable.get((cloud, acc.type))
    if gpu is None or spec.machine_type not in gpu.host_machine_types:
        pool.error(
            ("accelerator", "type"),
            f"GPU cannot be attached to {spec.machine_type}",
            acc.type,
            allowed=allowed_list(names),
            fix=choice_fix("accelerator.type", acc.type, names),
        )
        return None
    if acc.count is None:
        pool.error(
            ("accelerator", "count"),
            f"say how many {acc.type} GPUs to attach to {spec.machine_type}",
            allowed=", ".join(map(str, gpu.allowed_counts)),
            fix=f"add accelerator.count: {gpu.allowed_counts[0]} (or another allowed count)",
        )
        return None
    if acc.count not in gpu.allowed_counts:
        pool.error(
            ("accelerator", "count"),
            f"{acc.type} attaches in fixed counts",
            acc.count,
            allowed=", ".join(map(str, gpu.allowed_counts)),
            fix="pick one of the allowed counts",
        )
        return None
    return cat.resolve(cloud, spec.machine_type, acc.type, acc.count)


def check_sold_as(pool: Issues, cat: Catalog, cloud: Cloud, spec: NodePool) -> None:
    """A machine sold only as EC2 Capacity Blocks (or UltraServer blocks, or GCP reservations) exists in no other
    form: refuse the forms it is not sold in."""
    special = cat.special.get((cloud, spec.machine_type))
    cap = spec.capacity
    if special is not None and special.sold_as == SoldAs.ULTRASERVER:
        check_ultraserver(pool, cat, cloud, spec)
        return
    if special is not None and special.sold_as == SoldAs.RESERVATION_BOUND:
        if cap.type != CapacityType.RESERVATION:
            pool.error(
                ("capacity", "type"),
                f"{spec.machine_type} is sold only through reservations (reservation-"
                f"bound VMs of AI Hypercomputer); there are no {cap.type.value} VMs of it",
                cap.type.value,
                allowed="capacity: {type: reservation, reservation: <name>, reservationBlock: <block>}",
                fix="declare the reservation (and its block) you were granted",
            )
        return
    if (
        special is None
        or special.sold_as != SoldAs.CAPACITY_BLOCK
        or (cap.type == CapacityType.RESERVATION and cap.reservation_kind == AwsReservationKind.CAPACITY_BLOCK)
    ):
        return
    form = cap.type.value if cap.type != CapacityType.RESERVATION else "capacity-reservation (ODCR)"
    pool.error(
        ("capacity", "type"),
        f"{spec.machine_type} is sold only as EC2 Capacity Blocks for ML; there are no {form} instances of it",
        cap.type.value,
        allowed="capacity: {type: reservation, reservationKind: capacity-block, reservation: cr-…}",
        fix="buy a capacity block and declare it, or pick a machine sold on demand (p5en.48xlarge has the "
        "same 8 x H200)",
    )


def check_ultraserver(pool: Issues, cat: Catalog, cloud: Cloud, spec: NodePool) -> None:
    """An UltraServer-only machine: a capacity block of a declared UltraServer type, in whole UltraServers."""
    cap = spec.capacity
    types = cat.ultraserver_types(cloud, spec.machine_type)
    names = [u.ultraserver_type for u in types]
    if not (cap.type == CapacityType.RESERVATION and cap.reservation_kind == AwsReservationKind.CAPACITY_BLOCK):
        form = cap.type.value if cap.type != CapacityType.RESERVATION else "capacity-reservation (ODCR)"
        pool.error(
            ("capacity", "type"),
            f"{spec.machine_type} is sold only as part of an EC2 UltraServer, reserved "
            f"as an UltraServer Capacity Block; there are no {form} instances of it",
            cap.type.value,
            allowed="capacity: {type: reservation, reservationKind: capacity-block, reservation: cr-…, "
            f"ultraserverType: {names[-1] if names else '…'}}}",
            fix="buy an UltraServer capacity block and declare it",
        )
        return
    chosen = next((u for u in types if u.ultraserver_type == cap.ultraserver_type), None)
    if chosen is None:
        pool.error(
            ("capacity", "ultraserverType"),
            f"say which UltraServer type the capacity block of "
            f"{spec.machine_type} reserves (it fixes the NVLink domain: instances × GPUs)",
            cap.ultraserver_type,
            allowed=allowed_list(names),
            fix=choice_fix("capacity.ultraserverType", cap.ultraserver_type or "", names),
        )
        return
    reserved = cap.reserved_nodes or spec.max_nodes
    if reserved % chosen.instances:
        pool.error(
            ("capacity", "reservedNodes"),
            f"an UltraServer capacity block holds whole {chosen.ultraserver_type} "
            f"UltraServers of {chosen.instances} instances",
            reserved,
            allowed=f"a multiple of {chosen.instances}",
            fix=f"set capacity.reservedNodes (default maxNodes) to {chosen.instances} × the UltraServers bought",
        )
    if not spec.multi_node:
        pool.warn(
            "multiNode",
            f"a pool on an UltraServer ({chosen.instances} nodes on one NVLink domain) runs jobs "
            "across nodes: without multiNode it gets no EFA between UltraServers",
            spec.multi_node,
            fix="set multiNode: true",
        )


def _report_special(pool: Issues, cat: Catalog, cloud: Cloud, machine_type: str, known: list[str]) -> bool:
    special = cat.special.get((cloud, machine_type))
    if special is None or special.sold_as != SoldAs.ULTRASERVER:
        return False
    pool.error(
        "machineType",
        f"{machine_type} is sold only as part of an EC2 UltraServer ({special.gpus} GPUs per "
        "instance, reserved as an UltraServer Capacity Block); gpu-cluster does not build UltraServer pools",
        machine_type,
        allowed=allowed_list(known),
        fix="pick an 8-GPU machine sold per instance (p6-b200.48xlarge, p5en.48xlarge)",
    )
    return True


def _report_unknown_machine(
    pool: Issues, cat: Catalog, cloud: Cloud, i: int, machine_type: str, known: list[str]
) -> None:
    if _report_special(pool, cat, cloud, machine_type, known):
        return
    other = other_cloud(cloud)
    if machine_type in cat.machine_types(other):
        problem = f"{machine_type} is {CLOUD_NAME[other]} machine type; this stack's cloud is {cloud.value}"
        theirs = cat.machines.get((other, machine_type))
        same = [
            m.machine_type
            for m in sorted(cat.machines.values(), key=lambda m: m.machine_type)
            if theirs is not None
            and m.cloud == cloud
            and m.gpu_model == theirs.gpu_model
            and m.gpus == theirs.gpus
            and any(k[:2] == (cloud, m.machine_type) for k in cat.prices)
        ]
        fix = (
            f"use {CLOUD_NAME[cloud]} type with the same GPUs ({theirs.gpus} × {theirs.gpu_model.value}): "
            f"{', '.join(same)}"
            if same and theirs is not None
            else f"pick {CLOUD_NAME[cloud]} machine type from the allowed list"
        )
        fix += f"; or move this pool to {CLOUD_NAME[other]} stack"
    else:
        problem = f"unknown GPU machine type for {cloud.value}"
        fix = choice_fix(f"nodePools[{i}].machineType", machine_type, known, ", or add it to catalog/data/machines.csv")
    pool.error("machineType", problem, machine_type, allowed=allowed_list(known), fix=fix)


def check_price(pool: Issues, cat: Catalog, cloud: Cloud, region: str, spec: NodePool, machine: MachineType) -> None:
    """Unknown is not $0: a pool without a dated price for its region and capacity type is refused."""
    capacity = spec.capacity.type
    if not cat.has_region(cloud, region) or cat.node_price(machine, region, capacity) is not None:
        return
    special = cat.special.get((cloud, machine.machine_type))
    if special is not None and special.sold_as == SoldAs.RESERVATION_BOUND:
        return  # no public price: shown as unknown, and the cost policies fail closed unless priceOverrides has it
    if special is not None and spec.capacity.reservation_kind != AwsReservationKind.CAPACITY_BLOCK:
        return  # reported once, as the form it is not sold in
    if is_capacity_block(spec):
        _check_block_without_list_price(pool, cat, region, spec, machine)
        return
    if capacity == CapacityType.FLEX_START and cloud == Cloud.AWS:
        return  # no such capacity on EKS: reported once, at capacity.type
    kind = capacity.value if capacity in (CapacityType.SPOT, CapacityType.FLEX_START) else "on-demand"
    article = "an" if kind == "on-demand" else "a"
    elsewhere = cat.priced_regions(machine, capacity)
    if elsewhere:
        allowed = f"regions with {article} {kind} price: {allowed_list(elsewhere)}"
    else:
        other = (
            CapacityType.SPOT
            if capacity in (CapacityType.ON_DEMAND, CapacityType.RESERVATION)
            else CapacityType.ON_DEMAND
        )
        other_regions = cat.priced_regions(machine, other)
        allowed = f"no region has {article} {kind} price" + (
            f"; {other.value} is priced in {allowed_list(other_regions)}"
            if other_regions
            else f"; the catalog has no price for {spec.machine_type} at all"
        )
    reservation = " (reservations are billed at the on-demand rate)" if capacity == CapacityType.RESERVATION else ""
    price_file = "flex-start-prices.csv" if capacity == CapacityType.FLEX_START else "prices.csv"
    pool.error(
        "machineType",
        f"no {kind} price for {spec.machine_type} in {region}{reservation}; refusing to guess (unknown is not $0)",
        spec.machine_type,
        allowed=allowed,
        fix=f"add a dated, sourced row to catalog/data/{price_file}, or pick another region, capacity type or "
        "machine type",
    )


def _check_block_without_list_price(
    pool: Issues, cat: Catalog, region: str, spec: NodePool, machine: MachineType
) -> None:
    """A capacity block of a machine with no list price (p5e.48xlarge is sold only so) costs what was paid for it:
    the declared fee and window are its only price, so both are required here (elsewhere a block without them is
    priced as unknown)."""
    cap = spec.capacity
    missing = [key for key, value in (("upfrontFeeUsd", cap.upfront_fee_usd), ("window", cap.window)) if value is None]
    if not missing:
        return  # a malformed window is reported by the capacity-block checks
    pool.error(
        ("capacity", missing[0]),
        f"{machine.machine_type} has no list price: a capacity block of it costs only "
        "its upfront fee, so the fee and the window are needed to price it (unknown is not $0)",
        None,
        allowed="capacity.upfrontFeeUsd (the UpfrontFee of the offering you bought) and capacity.window "
        "({start, durationHours} or {start, end})",
        fix=f"declare {' and '.join('capacity.' + k for k in missing)} from "
        "`aws ec2 describe-capacity-reservations` / the purchase" + _reference_rate(cat, region, machine),
    )


def _reference_rate(cat: Catalog, region: str, machine: MachineType) -> str:
    """What the catalog's reference rate (a third-party scrape) says a node-hour of the block costs, for the fix."""
    rate = cat.block_rates.get((machine.cloud, machine.machine_type, region))
    if rate is None:
        return ""
    return (
        f"; for scale: {rate.label} ${rate.usd_per_gpu_hour:.3f}/GPU-h as of {rate.as_of} = "
        f"${rate.usd_per_gpu_hour * machine.gpus:,.2f} per node-hour"
    )
