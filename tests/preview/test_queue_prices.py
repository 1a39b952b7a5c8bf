"""The queue table prices a team's quota with the pool's billed rate, the same lookup as the cost table and the
what-if: a capacity block's fee, never the on-demand list price, and unknown (never a number) without the fee."""

from __future__ import annotations

from preview.engine import PROJECT_ROOT, read_stack_file
from preview.policy.check import PolicyOptions
from preview.run import preview_config, preview_stack
from tests.support.spec.edit import DELETE, edit

FEE, HOURS, NODES, GPUS_PER_NODE = 274_869.50, 4_368, 2, 8  # Pulumi.eks-kueue.yaml: the p5 block: 2 nodes, 182 days


def _p5(report, queue: str):
    assert report.queues is not None
    (row,) = [q for q in report.queues.quotas if q.queue == queue and q.pool == "p5"]
    return row


def test_a_capacity_blocks_queue_is_priced_at_the_block_fee():
    report = preview_stack("eks-kueue", policies=PolicyOptions(enabled=False))
    row = _p5(report, "pretraining")
    block_rate = FEE / HOURS / NODES / GPUS_PER_NODE  # $3.933/GPU-h; the on-demand list price is $6.88
    assert row.gpus == 12 and abs(row.usd_per_hour - 12 * block_rate) < 0.01  # $47.20/h, was $82.56


def test_a_block_without_its_fee_prices_its_queues_unknown():
    config = read_stack_file(PROJECT_ROOT / "Pulumi.eks-kueue.yaml")
    index = next(i for i, p in enumerate(config["gpu-cluster:nodePools"]) if p["name"] == "p5")
    report = preview_config(
        "eks-kueue",
        edit(config, f"nodePools[{index}].capacity.upfrontFeeUsd", DELETE),
        policies=PolicyOptions(enabled=False),
    )
    assert _p5(report, "pretraining").usd_per_hour is None
