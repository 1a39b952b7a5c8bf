"""Cost rules on reserved capacity: from the passing EKS baseline, the p5 node group is turned into a capacity block
(with or without its declared fee and window) or an ODCR with reserved nodes; exact messages."""

from __future__ import annotations

import pytest

from tests.support.spec.edit import edits
from tests.support.policy.harness import Pack, baseline, find, wire, with_props

NG = "aws:eks/nodeGroup:NodeGroup"
FEE_TAGS = {
    "gpu-cluster/capacity-block-usd": "21504.00",
    "gpu-cluster/capacity-block-start": "2030-01-07T11:30:00Z",
    "gpu-cluster/capacity-block-end": "2030-01-21T11:30:00Z",
    "gpu-cluster/reserved-nodes": "2",
}


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def with_group(changes: dict) -> list:
    rs = baseline("aws")
    group = find(rs, NG, "p5")
    return [with_props(r, edits(wire(r), changes)) if r is group else r for r in rs]


def block(tags: dict) -> list:
    group = find(baseline("aws"), NG, "p5")
    return with_group({"capacityType": "CAPACITY_BLOCK", "tags": {**wire(group)["tags"], **tags}})


def test_budget_fails_closed_on_a_block_without_its_fee(pack):
    pack.configure()
    tags = {k: v for k, v in FEE_TAGS.items() if k != "gpu-cluster/capacity-block-usd"}
    assert pack.stack(block(tags)) == [
        (
            "cost-stack-budget",
            "mandatory",
            "stack: the budget cannot be checked · observed: unpriced GPU pools: p5 (capacity block without a declared "
            "upfront fee (capacity.upfrontFeeUsd, capacity.window)) · required: a known price and autoscaler maximum for "
            "every GPU pool (unknown is not $0), to compare with the budget of $10,000.00/hour\nFix: give every GPU pool "
            "a known price and autoscaler maximum (catalog/data/prices.csv or priceOverrides of cost-stack-budget in the "
            "policy pack config)",
        )
    ]


def test_budget_counts_a_block_at_its_fee_over_the_window(pack):
    pack.configure({"cost-stack-budget": {"maxUsdPerHour": 1}})
    (diag,) = pack.stack(block(FEE_TAGS))
    assert "p5 capacity block $21,504.00 / 336 h = $64.00" in diag[2]
    assert "$64.68 per hour" in diag[2]  # $64.00 block + system pool 3 × $0.19 + control plane $0.10
    pack.configure({"cost-stack-budget": {"maxUsdPerHour": 64.68}})
    assert pack.stack(block(FEE_TAGS)) == []


def test_gpu_hour_limit_prices_a_block_per_reserved_gpu(pack):
    pack.configure({"cost-gpu-hour-limit": {"maxUsdPerGpuHour": 3}})
    rs = block(FEE_TAGS)
    assert pack.resource(find(rs, NG, "p5"), rs) == [
        (
            "cost-gpu-hour-limit",
            "mandatory",
            "pool 'p5': the price per GPU-hour is over the limit · observed: $4.00 per GPU-hour: capacity block of 2 × "
            "p5.48xlarge for $21,504.00 over 336 h · required: at most $3.00 per GPU-hour for H100_80GB, from "
            "maxUsdPerGpuHour\nFix: buy a cheaper block, or have the platform team raise maxUsdPerGpuHour of "
            "cost-gpu-hour-limit in the policy pack config",
        )
    ]
    pack.configure()
    assert pack.resource(find(rs, NG, "p5"), rs) == []


def test_gpu_hour_limit_fails_closed_on_a_block_without_its_fee(pack):
    pack.configure()
    rs = block({"gpu-cluster/reserved-nodes": "2"})
    assert pack.resource(find(rs, NG, "p5"), rs) == [
        (
            "cost-gpu-hour-limit",
            "mandatory",
            "pool 'p5': no price is known for the pool, so its cost cannot be checked · observed: p5.48xlarge on a "
            "capacity block without a declared upfront fee and window (capacity.upfrontFeeUsd, capacity.window) · "
            "required: a known price (unknown is not $0)\nFix: declare capacity.upfrontFeeUsd and capacity.window of the "
            "pool in the stack config",
        )
    ]


def test_budget_counts_every_reserved_node_of_an_odcr(pack):
    pack.configure({"cost-stack-budget": {"maxUsdPerHour": 1}})
    group = find(baseline("aws"), NG, "p5")
    rs = with_group({"tags": {**wire(group)["tags"], "gpu-cluster/reserved-nodes": "5"}})
    (diag,) = pack.stack(rs)
    assert "p5 5 × $55.04 = $275.20" in diag[2]
