"""A capacity block exists only inside its window, in the what-if as in EC2: its nodes go 30 minutes before the
window ends (EC2 user guide, "Work with Capacity Blocks": EC2 starts terminating the instances then), the jobs on
them are killed, nothing starts on it afterwards, and the bill is the block's fee for the hours of the window the
run covers, the same figure the preview prices (``stacks/plan/billing.py``), never more than the fee."""

from __future__ import annotations

import copy

import pytest

from stacks.plan.capacity_block import EC2_TERMINATION_LEAD, SCALE_DOWN_LEAD, ULTRASERVER_TERMINATION_LEAD
from whatif.api import PROJECT_ROOT, read_stack_config
from whatif.cluster import BLOCK_SCALE_DOWN_LEAD_S
from whatif.metrics import pool_row
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs
from tests.support.whatif.stacks import cluster

OPTS = SimOptions(spot_interruptions=False)
H = 3600.0


def _eks_kueue_block(hours: int, fee: float) -> dict:
    """eks-kueue with its 2-node p5 block shortened to ``hours`` for ``fee``."""
    cfg = copy.deepcopy(read_stack_config(PROJECT_ROOT / "Pulumi.eks-kueue.yaml"))
    p5 = cfg["gpu-cluster:nodePools"][0]
    p5["capacity"]["window"]["durationHours"] = hours
    p5["capacity"]["upfrontFeeUsd"] = fee
    return cfg


def test_a_job_on_a_capacity_block_is_killed_when_the_block_ends_and_the_bill_is_the_fee():
    """24-h block, 2 p5 nodes, fee $1,536: a 48-h job starts at 0 and is killed at 23.5 h (the block's nodes go
    30 minutes before its end); a job submitted at 30 h never starts. Paid: 2 nodes × 24 h = the fee, $1,536.00
    (the old what-if ran the job to 48 h on nodes that no longer exist and billed 2 × 48 h: $3,072)."""
    model = cluster(_eks_kueue_block(24, 1536.0), OPTS)
    jobs = [
        Job("long", 0, "pretraining", 8, run_s=48 * H, pool="p5"),
        Job("late", 30 * H, "pretraining", 8, run_s=H, pool="p5"),
    ]
    res = simulate_jobs(model, jobs, 0, OPTS)
    long, late = res.jobs["long"], res.jobs["late"]
    assert long.start_s == 0 and long.end_s is None  # killed, never finished
    assert late.start_s is None
    p5 = res.pools["p5"]
    assert p5.paid_node_s == pytest.approx(2 * 24 * H)
    assert pool_row(p5)["costUsd"] == 1536.0
    assert p5.allocated_gpu_s == pytest.approx(8 * 23.5 * H)  # the job held its node until the nodes went
    assert any("capacity block p5" in w and "23.5 h" in w and "killing 1" in w for w in res.warnings)


def test_a_run_inside_the_window_pays_the_fee_for_its_hours_only():
    """The same block, one 2-h job: the run lasts its pods' start (the image pull on the block's nodes) + 2 h and
    pays those hours of the window's 24 hours of fee (the preview's $/h for the block × those hours)."""
    model = cluster(_eks_kueue_block(24, 1536.0), OPTS)
    res = simulate_jobs(model, [Job("j", 0, "pretraining", 8, run_s=2 * H, pool="p5")], 0, OPTS)
    running = res.jobs["j"].running_s
    assert running is not None and 0 < running < 600
    assert res.horizon_s == pytest.approx(running + 2 * H)
    assert pool_row(res.pools["p5"])["costUsd"] == pytest.approx(1536.0 / 24 * res.horizon_s / H, abs=0.01)
    assert not res.warnings


def test_the_horizon_past_a_block_does_not_bill_past_its_fee():
    """--horizon-hours 100 on a 24-h block with work left: billed $1,536, the fee, not 100 h of it."""
    model = cluster(_eks_kueue_block(24, 1536.0), OPTS)
    opts = SimOptions(spot_interruptions=False, horizon_s=100 * H)
    res = simulate_jobs(model, [Job("long", 0, "pretraining", 8, run_s=48 * H, pool="p5")], 0, opts)
    assert pool_row(res.pools["p5"])["costUsd"] == 1536.0


def test_the_reviewers_gb200_case_bills_the_block_fee_not_more():
    """eks-p6e-gb200 (Slurm, one 18-node block of 336 h for $255,999.74) with a job longer than the window: the
    reviewer's run billed $306,348.90 (the block kept running to 402 h). The block's fee is the most it costs."""
    model = cluster(read_stack_config(PROJECT_ROOT / "Pulumi.eks-p6e-gb200.yaml"), OPTS)
    res = simulate_jobs(
        model, [Job("long", 0, next(iter(model.queues)), 4, run_s=402 * H, nodes=2, time_limit_s=500 * H)], 0, OPTS
    )
    assert res.jobs["long"].end_s is None
    assert pool_row(res.pools["gb200"])["costUsd"] == 255_999.74
    # an UltraServer block: EC2 starts terminating its instances 60 minutes before the window ends (30 elsewhere)
    assert res.horizon_s == pytest.approx(335 * H)
    assert model.pools["gb200"].drain_lead_s == ULTRASERVER_TERMINATION_LEAD.total_seconds() == 3600


def test_the_what_if_loses_a_block_when_ec2_terminates_it_after_the_planned_scale_down():
    assert BLOCK_SCALE_DOWN_LEAD_S == EC2_TERMINATION_LEAD.total_seconds()
    assert SCALE_DOWN_LEAD > EC2_TERMINATION_LEAD  # the node group drains before EC2 cuts the instances


def test_eks_kueue_what_if_cost_is_the_preview_block_price_for_the_same_hours():
    """The preview's $/h for the p5 block × the what-if's hours = the what-if's p5 cost (and, over a horizon past
    the window, at most the declared fee: the block's $/h × its window hours is its fee)."""
    from preview.run import preview_stack
    from whatif.run import run_whatif

    report = preview_stack("eks-kueue")
    p5 = next(p for p in report.cost.pools if p.pool == "p5")
    res = run_whatif("eks-kueue", PROJECT_ROOT / "workloads" / "eks-kueue.yaml").result
    hours = res.horizon_s / 3600
    assert pool_row(res.pools["p5"])["costUsd"] == pytest.approx(p5.usd_per_hour_max * hours, abs=0.01)
    assert p5.usd_per_hour_max * p5.block["hours"] == pytest.approx(p5.block["usdTotal"], abs=0.01)


def test_a_block_without_a_declared_fee_still_ends_with_its_window():
    """The fee is unknown (its $ figures are null), but the window is declared: the 24-h block's nodes go at 23.5 h
    and the 48-h job on it is killed there (the old what-if lost the window with the fee and ran the job 48 h)."""
    cfg = _eks_kueue_block(24, 1536.0)
    del cfg["gpu-cluster:nodePools"][0]["capacity"]["upfrontFeeUsd"]
    model = cluster(cfg, OPTS)
    res = simulate_jobs(model, [Job("long", 0, "pretraining", 8, run_s=48 * H, pool="p5")], 0, OPTS)
    assert res.jobs["long"].end_s is None
    assert res.horizon_s == pytest.approx(23.5 * H)
    assert pool_row(res.pools["p5"])["costUsd"] is None
    assert any("capacity block p5" in w and "killing 1" in w for w in res.warnings)
    assert "window ends" in (model.pools["p5"].billing_note or "")


def test_the_billing_note_spells_the_block_type_one_way_with_or_without_a_fee():
    """The note names the pool type as the stack spells it (``reservationKind: capacity-block``), priced or not."""
    priced = _eks_kueue_block(24, 1536.0)
    unpriced = copy.deepcopy(priced)
    del unpriced["gpu-cluster:nodePools"][0]["capacity"]["upfrontFeeUsd"]
    for cfg in (priced, unpriced):
        note = cluster(cfg, OPTS).pools["p5"].billing_note or ""
        assert note.startswith("p5 (capacity-block): "), note
