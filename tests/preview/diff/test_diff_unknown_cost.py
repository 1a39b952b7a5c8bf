"""A pool whose cost is unknown (reservation-bound A4X) is never a $0 line in a stack diff: the line reads unknown,
the totals say ``+ unknown`` and name it, and JSON lists it."""

from __future__ import annotations

from preview.cost import PoolCost, CostReport
from preview.diff.cost import diff_cost


def _pool(name: str, nodes: int, usd: float | None) -> PoolCost:
    return PoolCost(
        pool=name,
        machine_type="a4x-highgpu-4g",
        gpu_model="GB200",
        capacity="reservation",
        gpus_per_node=4,
        min_nodes=nodes,
        max_nodes=nodes,
        usd_per_node_hour=usd,
        usd_per_gpu_hour=None if usd is None else usd / 4,
        usd_per_hour_min=None if usd is None else usd * nodes,
        usd_per_hour_max=None if usd is None else usd * nodes,
        usd_per_month_max=None,
        price_source="unknown: reservation price not public" if usd is None else "x",
        price_as_of="",
    )


def test_an_unknown_pool_is_flagged_not_zero():
    diff = diff_cost(CostReport([_pool("gb200", 36, None)], []), CostReport([_pool("gb200", 54, None)], []))
    (line,) = diff.lines
    assert line.unknown and line.changed and diff.unknown == ["gb200"]
    totals = diff.as_dict()["totals"]
    assert totals["unpricedPools"] == ["gb200"] and totals["usdPerHourMax"]["after"] == 0.0
    assert diff.as_dict()["lines"][0]["unknown"] is True


def test_priced_pools_are_not_flagged():
    diff = diff_cost(CostReport([_pool("h100", 2, 10.0)], []), CostReport([_pool("h100", 4, 10.0)], []))
    assert diff.unknown == [] and diff.lines[0].delta_max == 20.0
