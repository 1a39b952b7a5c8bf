"""Cost per pool and per stack from derived pool facts and catalog prices. Pure: no Pulumi."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from catalog import Catalog, Cloud
from stacks.facts import PoolFacts
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


def pool_cost(f: PoolFacts) -> PoolCost:
    node = f.price.usd_per_hour
    return PoolCost(pool=f.name, machine_type=f.machine.machine_type, gpu_model=f.machine.gpu_model.value,
                    capacity=f.capacity.value, gpus_per_node=f.gpus_per_node, min_nodes=f.min_nodes,
                    max_nodes=f.max_nodes, usd_per_node_hour=node, usd_per_gpu_hour=node / f.gpus_per_node,
                    usd_per_hour_min=node * f.min_nodes, usd_per_hour_max=node * f.max_nodes,
                    usd_per_month_max=node * f.max_nodes * HOURS_PER_MONTH, price_source=f.price.label,
                    price_as_of=f.price.as_of.isoformat())


def stack_cost(spec: StackSpec, pools: list[PoolFacts], cat: Catalog) -> CostReport:
    report = CostReport(pools=[pool_cost(f) for f in pools], fixed=[])
    fee = cat.control_plane[spec.cloud]
    report.fixed.append(FixedCost(item=f"control plane ({fee.label})", usd_per_hour_min=fee.usd_per_hour,
                                  usd_per_hour_max=fee.usd_per_hour, source=fee.source, as_of=fee.as_of.isoformat()))
    if spec.cluster.mode == ClusterMode.CREATE:
        sp = spec.cluster.system_pool
        default = "e2-standard-4" if spec.cloud == Cloud.GCP else "m6i.xlarge"
        machine = sp.machine_type or default
        price = cat.host_price(spec.cloud, machine, spec.region)
        if price is None:
            report.notes.append(f"system pool {machine} has no catalog price in {spec.region}; it is not in the "
                                "totals (add it to catalog/data/prices.csv)")
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
