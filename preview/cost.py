"""Cost per pool and per stack from derived pool facts and catalog prices. Pure: no Pulumi."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from catalog import Catalog, Cloud
from stacks.facts import PoolFacts
from stacks.scheduling_spec import Workload
from stacks.spec import ClusterMode, StackSpec

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
    usd_per_node_hour: float
    usd_per_gpu_hour: float
    usd_per_hour_min: float
    usd_per_hour_max: float
    usd_per_month_max: float
    price_source: str
    price_as_of: str


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

    @property
    def usd_per_hour_min(self) -> float:
        return sum(p.usd_per_hour_min for p in self.pools) + sum(f.usd_per_hour_min for f in self.fixed)

    @property
    def usd_per_hour_max(self) -> float:
        return sum(p.usd_per_hour_max for p in self.pools) + sum(f.usd_per_hour_max for f in self.fixed)

    @property
    def usd_per_month_max(self) -> float:
        return self.usd_per_hour_max * HOURS_PER_MONTH

    @property
    def max_gpus(self) -> int:
        return sum(p.gpus_per_node * p.max_nodes for p in self.pools)

    def as_dict(self) -> dict:
        return {"pools": [asdict(p) for p in self.pools], "fixed": [asdict(f) for f in self.fixed],
                "notes": self.notes,
                "totals": {"usdPerHourMin": round(self.usd_per_hour_min, 4),
                           "usdPerHourMax": round(self.usd_per_hour_max, 4),
                           "usdPerMonthMax": round(self.usd_per_month_max, 2), "maxGpus": self.max_gpus}}


def pools_held_at_max(spec: StackSpec) -> set[str]:
    """Pools that never run below maxNodes: with ``workload: slurm`` every pool has a Slinky NodeSet with
    ``replicas = maxNodes`` (``scheduling/slurm_nodes.py``), whose slurmd pods keep the autoscaler at maxNodes."""
    if spec.scheduling is None or spec.scheduling.workload != Workload.SLURM:
        return set()
    return {p.name for p in spec.node_pools}


def pool_cost(f: PoolFacts, held_at_max: bool = False) -> PoolCost:
    """``held_at_max``: the pool's floor is maxNodes (a Slurm NodeSet), so $/h at min is priced at maxNodes."""
    node = f.price.usd_per_hour
    return PoolCost(pool=f.name, machine_type=f.machine.machine_type, gpu_model=f.machine.gpu_model.value,
                    capacity=f.capacity.value, gpus_per_node=f.gpus_per_node, min_nodes=f.min_nodes,
                    max_nodes=f.max_nodes, usd_per_node_hour=node, usd_per_gpu_hour=node / f.gpus_per_node,
                    usd_per_hour_min=node * (f.max_nodes if held_at_max else f.min_nodes),
                    usd_per_hour_max=node * f.max_nodes,
                    usd_per_month_max=node * f.max_nodes * HOURS_PER_MONTH, price_source=f.price.label,
                    price_as_of=f.price.as_of.isoformat())


def _control_plane(spec: StackSpec, cat: Catalog, report: CostReport) -> None:
    """The per-cluster fee of a cluster this stack creates: on EKS by the version's support status on the catalog's
    price date (extended support bills more). An existing cluster's fee is not caused by this stack, so it is left
    out, as the cost-stack-budget policy leaves it out (it sees no cluster resource)."""
    if spec.cluster.mode != ClusterMode.CREATE:
        report.notes.append(f"the control-plane fee of the existing cluster '{spec.cluster.name}' is not counted: "
                            "this stack adds node pools to it but does not create it")
        return
    version = spec.cluster.kubernetes_version if spec.cloud == Cloud.AWS else None
    fee = cat.control_plane_fee(spec.cloud, version)
    report.fixed.append(FixedCost(item=f"control plane ({fee.label})", usd_per_hour_min=fee.usd_per_hour,
                                  usd_per_hour_max=fee.usd_per_hour, source=fee.source, as_of=fee.as_of.isoformat()))
    calendar = cat.eks_versions.get(version or "")
    if fee.support == "extended" and calendar is not None:
        standard = cat.control_plane[spec.cloud].usd_per_hour
        report.notes.append(f"EKS {version} is past standard support since {calendar.end_of_standard_support}: the "
                            f"control plane bills ${fee.usd_per_hour:.2f}/h (extended support) instead of "
                            f"${standard:.2f}/h; a version in standard support costs less")


def stack_cost(spec: StackSpec, pools: list[PoolFacts], cat: Catalog) -> CostReport:
    held = pools_held_at_max(spec)
    report = CostReport(pools=[pool_cost(f, f.name in held) for f in pools], fixed=[])
    raised = [f"{f.name} ({f.min_nodes} → {f.max_nodes})" for f in pools if f.name in held and f.min_nodes < f.max_nodes]
    if raised:
        report.notes.append(f"$/h min of {', '.join(raised)} is priced at maxNodes, not minNodes: with workload slurm "
                            "each pool's Slurm NodeSet runs one slurmd pod per node up to maxNodes, so the autoscaler "
                            "scales the pool up and keeps it there")
    _control_plane(spec, cat, report)
    if spec.cluster.mode == ClusterMode.CREATE:
        sp = spec.cluster.system_pool
        machine = sp.machine_type_for(spec.cloud)
        price = cat.host_price(spec.cloud, machine, spec.region)
        if price is None:  # validation refuses this; a total without the system pool would not be a total
            raise UnpricedCost("gpu-cluster:cluster.systemPool.machineType", machine, spec.region)
        else:
            report.fixed.append(FixedCost(item=f"system pool ({sp.min_nodes}-{sp.max_nodes} × {machine})",
                                          usd_per_hour_min=price.usd_per_hour * sp.min_nodes,
                                          usd_per_hour_max=price.usd_per_hour * sp.max_nodes,
                                          source=price.label, as_of=price.as_of.isoformat()))
    if any(p.capacity == "reservation" for p in report.pools):
        report.notes.append("reservation pools are priced at the on-demand rate and only for running nodes; a "
                            "reservation is billed whether or not nodes use it, and committed-use or capacity-block "
                            "prices are not modelled")
    if any(p.capacity == "spot" for p in report.pools):
        report.notes.append("spot prices move daily; the catalog date says how old each one is")
    return report
