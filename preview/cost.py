"""Cost per pool and per stack from derived pool facts and catalog prices. Pure: no Pulumi."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Iterable

from catalog import Catalog, Cloud
from stacks.plan.billing import pool_billing
from stacks.plan.capacity_block import block_price, block_window, iso
from stacks.plan.facts import PoolFacts
from stacks.plan.reservation import is_capacity_block, reserved_nodes
from stacks.plan.slurm_scaling import scales
from preview.cost_notes import conventions
from stacks.spec.scheduling import Workload
from stacks.spec.cluster import ClusterMode
from stacks.spec.stack import NodePool, StackSpec

HOURS_PER_MONTH = 730  # the convention cloud price lists use (8,760 h / 12)


@dataclass(frozen=True)
class PoolCost:
    pool: str
    machine_type: str
    gpu_model: str
    capacity: str
    gpus_per_node: int
    min_nodes: int
    max_nodes: int
    usd_per_node_hour: float | None
    """None (with every other USD field): the cost is unknown, e.g. a capacity block without its fee."""
    usd_per_gpu_hour: float | None
    usd_per_hour_min: float | None
    usd_per_hour_max: float | None
    usd_per_month_max: float | None
    price_source: str
    price_as_of: str
    reserved_nodes: int | None = None
    """Reservation pools: nodes billed whether they run or not (``capacity.reservedNodes``, default maxNodes)."""
    block: dict | None = None
    """Capacity blocks: the window (start, end, hours, scale-up and scale-down times) and, when declared, the upfront
    fee (``usdTotal``)."""
    list_usd_per_node_hour: float | None = None
    """Set when a negotiated price (priceOverrides) replaces the catalog's list price: the list price it replaces."""
    overridden: bool = False
    """Priced at a negotiated price (priceOverrides), whether or not the catalog has a list price for it."""
    notes: tuple[str, ...] = ()
    """The conventions this pool's figures rest on (``preview/cost_notes.py``): the 730-hour month, AWS spot = the
    cheapest AZ, a capacity block's fee over its window, a flex-start price's source and age, SkyPilot dates."""

    @property
    def priced(self) -> bool:
        return self.usd_per_hour_max is not None


@dataclass(frozen=True)
class FixedCost:
    item: str
    usd_per_hour_min: float
    usd_per_hour_max: float
    source: str
    as_of: str


class UnpricedCost(Exception):
    """A cost item has no catalog price: the preview stops (exit 2) instead of printing a partial total."""

    def __init__(self, path: str, item: str, region: str):
        self.path, self.item, self.region = path, item, region
        super().__init__(f"{path}: no on-demand catalog price for {item} in {region}")


@dataclass
class CostReport:
    pools: list[PoolCost]
    fixed: list[FixedCost]
    notes: list[str] = field(default_factory=list)
    conventions: list[str] = field(default_factory=list)
    """How the figures are counted, each naming the pools it affects (``preview/cost_notes.py``); shown after
    ``notes``, and folded in a pull-request diff comment."""
    not_counted: list[str] = field(default_factory=list)
    """What the stack pays for that no figure includes (boot disks, Cloud NAT)."""

    @property
    def usd_per_hour_min(self) -> float:
        """Of the priced items: a pool of unknown cost is in ``unpriced``, never counted as $0."""
        return sum(p.usd_per_hour_min or 0.0 for p in self.pools) + sum(f.usd_per_hour_min for f in self.fixed)

    @property
    def usd_per_hour_max(self) -> float:
        return sum(p.usd_per_hour_max or 0.0 for p in self.pools) + sum(f.usd_per_hour_max for f in self.fixed)

    @property
    def unpriced(self) -> list[str]:
        return [p.pool for p in self.pools if not p.priced]

    @property
    def usd_per_month_max(self) -> float:
        # each pool's own month: a capacity block shorter than a month costs its fee once, not 730 h of its rate
        return (
            sum(p.usd_per_month_max or 0.0 for p in self.pools)
            + sum(f.usd_per_hour_max for f in self.fixed) * HOURS_PER_MONTH
        )

    @property
    def max_gpus(self) -> int:
        return sum(p.gpus_per_node * p.max_nodes for p in self.pools)

    def as_dict(self) -> dict:
        return {
            "pools": [asdict(p) for p in self.pools],
            "fixed": [asdict(f) for f in self.fixed],
            "notes": self.notes,
            "conventions": self.conventions,
            "totals": {
                "usdPerHourMin": round(self.usd_per_hour_min, 4),
                "usdPerHourMinExcludes": self.unpriced,
                "usdPerHourMax": round(self.usd_per_hour_max, 4),
                "usdPerHourMaxExcludes": self.unpriced,
                "usdPerMonthMax": round(self.usd_per_month_max, 2),
                "usdPerMonthMaxExcludes": self.unpriced,
                "maxGpus": self.max_gpus,
                "complete": not self.unpriced,
                "unpricedPools": self.unpriced,
                "notCounted": self.not_counted,
            },
        }


def usd(value: float | None, digits: int = 2) -> str:
    """``1,234.57``, or ``unknown`` for a cost nobody knows (never shown as 0)."""
    return "unknown" if value is None else f"{value:,.{digits}f}"


def usd_total(report: CostReport, value: float, digits: int = 2) -> str:
    """A total, marked when it leaves a pool of unknown cost out: ``98.00 + unknown``."""
    return f"{value:,.{digits}f}" + (" + unknown" if report.unpriced else "")


def pools_held_at_max(spec: StackSpec) -> set[str]:
    """Pools that never run below maxNodes: with ``workload: slurm`` and ``slurm.scaling.enabled: false`` every pool's
    Slinky NodeSet has ``replicas = maxNodes`` (``stacks/plan/slurm_nodes.py``), whose slurmd pods keep the
    autoscaler at maxNodes. With scaling on (the default) a pool with ``minNodes < maxNodes`` follows the queue."""
    if spec.scheduling is None or spec.scheduling.workload != Workload.SLURM:
        return set()
    scaling = spec.scheduling.slurm.scaling
    return {p.name for p in spec.node_pools if not scales(scaling, p.min_nodes, p.max_nodes)}


def pool_cost(
    f: PoolFacts, held_at_max: bool = False, pool: NodePool | None = None, overrides: Iterable[dict] = ()
) -> PoolCost:
    """``held_at_max``: the pool's floor is maxNodes (a Slurm NodeSet), so $/h at min is priced at maxNodes.
    ``pool``: the spec, for reservations (every reserved node is billed) and capacity blocks (the upfront fee over
    the window, whether nodes run or not). ``overrides``: the policy pack's priceOverrides, which replace list
    prices here as in the cost rules and the what-if (``stacks/plan/billing.py``, the one lookup)."""
    reserved = reserved_nodes(pool) if pool is not None else None
    if pool is not None and f.cloud == Cloud.AWS and is_capacity_block(pool):
        return _block_cost(f, pool, reserved)
    bill = pool_billing(f, pool, overrides) if pool is not None else None
    if bill is not None and bill.usd_per_node_hour is not None:
        node, label = bill.usd_per_node_hour, bill.label
        as_of = bill.as_of.isoformat() if bill.as_of else ""
    elif f.price is not None and bill is None:
        node, label, as_of = f.price.usd_per_hour, f.price.label, f.price.as_of.isoformat()
    else:
        return _unpublished_cost(f, reserved)
    floor, ceiling = (f.max_nodes if held_at_max else f.min_nodes), f.max_nodes
    if reserved is not None:  # billed whether used or not
        floor, ceiling = max(floor, reserved), max(ceiling, reserved)
    return PoolCost(
        pool=f.name,
        machine_type=f.machine.machine_type,
        gpu_model=f.machine.gpu_model.value,
        capacity=f.capacity.value,
        gpus_per_node=f.gpus_per_node,
        min_nodes=f.min_nodes,
        max_nodes=f.max_nodes,
        usd_per_node_hour=node,
        usd_per_gpu_hour=node / f.gpus_per_node,
        usd_per_hour_min=node * floor,
        usd_per_hour_max=node * ceiling,
        usd_per_month_max=node * ceiling * HOURS_PER_MONTH,
        price_source=label,
        price_as_of=as_of,
        reserved_nodes=reserved,
        list_usd_per_node_hour=bill.list_usd_per_node_hour if bill is not None and bill.overridden else None,
        overridden=bill is not None and bill.overridden,
    )


UNPUBLISHED = "unknown: reservation price not public"


def _unpublished_cost(f: PoolFacts, reserved: int | None, capacity: str | None = None) -> PoolCost:
    """A pool with no price (yet): every dollar None, so the totals say ``+ unknown`` and the budget and $/GPU-hour
    policies fail closed. As it is, a reservation-bound machine without a public list price (GKE A4X) unless
    ``priceOverrides`` gives the price; ``_block_cost`` starts from it too."""
    return PoolCost(
        pool=f.name,
        machine_type=f.machine.machine_type,
        gpu_model=f.machine.gpu_model.value,
        capacity=capacity or f.capacity.value,
        gpus_per_node=f.gpus_per_node,
        min_nodes=f.min_nodes,
        max_nodes=f.max_nodes,
        usd_per_node_hour=None,
        usd_per_gpu_hour=None,
        usd_per_hour_min=None,
        usd_per_hour_max=None,
        usd_per_month_max=None,
        price_source=UNPUBLISHED,
        price_as_of="",
        reserved_nodes=reserved,
    )


def _block_cost(f: PoolFacts, pool: NodePool, reserved: int | None) -> PoolCost:
    """A capacity block costs its upfront fee, spread over its window: the same $/h at min and at max, since it is
    paid whether nodes run or not; $/month is the most it bills in any 730 hours. No fee or window: unknown."""
    window = block_window(pool)
    price = block_price(f.cloud, pool, f.gpus_per_node)
    block = {**(window.as_dict() if window else {}), "usdTotal": pool.capacity.upfront_fee_usd}
    unknown = replace(_unpublished_cost(f, reserved, "capacity-block"), price_source="", block=block)
    if price is None:
        missing = " and ".join(
            k for k, v in (("upfrontFeeUsd", pool.capacity.upfront_fee_usd), ("window", window)) if v is None
        )
        return replace(unknown, price_source=f"unknown: capacity block without capacity.{missing}")
    assert window is not None  # a price needs the window
    return replace(
        unknown,
        usd_per_node_hour=price.usd_per_node_hour,
        usd_per_gpu_hour=price.usd_per_gpu_hour,
        usd_per_hour_min=price.usd_per_hour,
        usd_per_hour_max=price.usd_per_hour,
        usd_per_month_max=price.usd_per_hour * min(price.hours, HOURS_PER_MONTH),
        price_source=f"upfront fee ${price.fee_usd:,.2f} declared for {iso(window.start)} → "
        f"{iso(window.end)} ({price.hours:g} h × {price.nodes} nodes)",
        price_as_of=window.start.date().isoformat(),
    )


def _control_plane(spec: StackSpec, cat: Catalog, report: CostReport) -> None:
    """The per-cluster fee of a cluster this stack creates: on EKS by the version's support status on the catalog's
    price date (extended support bills more). An existing cluster's fee is not caused by this stack, so it is left
    out, as the cost-stack-budget policy leaves it out (it sees no cluster resource)."""
    if spec.cluster.mode != ClusterMode.CREATE:
        report.notes.append(
            f"the control-plane fee of the existing cluster '{spec.cluster.name}' is not counted: "
            "this stack adds node pools to it but does not create it"
        )
        return
    version = spec.cluster.kubernetes_version if spec.cloud == Cloud.AWS else None
    fee = cat.control_plane_fee(spec.cloud, version)
    report.fixed.append(
        FixedCost(
            item=f"control plane ({fee.label})",
            usd_per_hour_min=fee.usd_per_hour,
            usd_per_hour_max=fee.usd_per_hour,
            source=fee.source,
            as_of=fee.as_of.isoformat(),
        )
    )
    calendar = cat.eks_versions.get(version or "")
    if fee.support == "extended" and calendar is not None:
        standard = cat.control_plane[spec.cloud].usd_per_hour
        report.notes.append(
            f"EKS {version} is past standard support since {calendar.end_of_standard_support}: the "
            f"control plane bills ${fee.usd_per_hour:.2f}/h (extended support) instead of "
            f"${standard:.2f}/h; a version in standard support costs less"
        )


def stack_cost(spec: StackSpec, pools: list[PoolFacts], cat: Catalog, overrides: Iterable[dict] = ()) -> CostReport:
    """``overrides``: the policy pack's priceOverrides (negotiated prices), applied to the GPU pools as the cost rules
    apply them."""
    held = pools_held_at_max(spec)
    by_name = {p.name: p for p in spec.node_pools}
    listed = list(overrides)
    report = CostReport(pools=[pool_cost(f, f.name in held, by_name.get(f.name), listed) for f in pools], fixed=[])
    raised = [
        f"{f.name} ({f.min_nodes} → {f.max_nodes})" for f in pools if f.name in held and f.min_nodes < f.max_nodes
    ]
    if raised:
        report.notes.append(
            f"$/h min of {', '.join(raised)} is priced at maxNodes, not minNodes: with workload slurm "
            "and slurm.scaling.enabled: false each pool's Slurm NodeSet runs one slurmd pod per node "
            "up to maxNodes, so the autoscaler scales the pool up and keeps it there"
        )
    _control_plane(spec, cat, report)
    if spec.cluster.mode == ClusterMode.CREATE:
        sp = spec.cluster.system_pool
        machine = sp.machine_type_for(spec.cloud)
        price = cat.host_price(spec.cloud, machine, spec.region)
        if price is None:  # validation refuses this; a total without the system pool would not be a total
            raise UnpricedCost("gpu-cluster:cluster.systemPool.machineType", machine, spec.region)
        else:
            report.fixed.append(
                FixedCost(
                    item=f"system pool ({sp.min_nodes}-{sp.max_nodes} × {machine})",
                    usd_per_hour_min=price.usd_per_hour * sp.min_nodes,
                    usd_per_hour_max=price.usd_per_hour * sp.max_nodes,
                    source=price.label,
                    as_of=price.as_of.isoformat(),
                )
            )
    _reservation_notes(report)
    if any(p.capacity == "spot" for p in report.pools):
        report.notes.append("spot prices move daily; the catalog date says how old each one is")
    said = conventions(report.pools, spec, pools, cat)
    report.pools = [replace(p, notes=said.pool_notes.get(p.pool, ())) for p in report.pools]
    report.conventions, report.not_counted = said.stack, said.not_counted
    return report


def _reservation_notes(report: CostReport) -> None:
    pools = [p for p in report.pools if p.capacity == "reservation" and p.priced]
    reserved = [f"{p.pool} ({p.reserved_nodes})" for p in pools]
    negotiated = all(p.price_source.startswith("negotiated") for p in pools)
    how = (
        "priced at the negotiated price of priceOverrides"
        if negotiated
        else "priced at the on-demand list rate (a committed-use or savings-plan discount goes in priceOverrides "
        "of the policy pack config)"
    )
    if reserved:
        report.notes.append(
            f"reservation pools are billed for every reserved node whether used or not, so $/h min "
            f"counts them: {', '.join(reserved)}; {how}"
        )
    for p in report.pools:
        if p.price_source == UNPUBLISHED:
            report.notes.append(
                f"the cost of {p.pool} ({p.machine_type}, reservation-bound) is unknown: the "
                "reservation price is not public, so the totals leave it out and the cost-stack-budget "
                "and cost-gpu-hour-limit policies fail closed; give your contract price as "
                "priceOverrides in the policy pack config"
            )
        elif p.capacity == "capacity-block" and p.priced and p.block is not None:
            report.notes.append(
                f"capacity block {p.pool}: ${p.block['usdTotal']:,.2f} paid up front for "
                f"{p.block['start']} → {p.block['end']}, whether nodes run or not"
            )
        elif p.capacity == "capacity-block":
            report.notes.append(
                f"the cost of capacity block {p.pool} is unknown ({p.price_source.removeprefix('unknown: ')}"
                "): the totals leave it out and the cost-stack-budget policy fails closed; declare "
                "the fee and window you bought"
            )
