"""Where a what-if run ends and what it bills: a long job runs to its end (the drain limit never cuts a job that can
still end), a run that must stop with work left says so in every format and is billed as a horizon cut, and a job
whose only fitting pool is a capacity block that has ended does not keep the run going on pools it does not fit."""

from __future__ import annotations

import copy
import json

import pytest

from whatif.__main__ import main
from whatif.api import PROJECT_ROOT, read_stack_config
from whatif.metrics import pool_row
from whatif.model import DRAIN_LIMIT_S, Job, SimOptions
from whatif.run import simulate_jobs
from tests.support.whatif.stacks import cluster

H = 3600.0
OPTS = SimOptions(spot_interruptions=False)
BLOCK_FEE, BLOCK_HOURS, BLOCK_NODES = 274_869.50, 4368, 2  # Pulumi.eks-kueue.yaml's p5 capacity block
SPOT_STORM = SimOptions(spot_interruptions_per_node_month=1000)
"""A spot node reclaimed every 43 minutes on average: a 10-h job with no checkpoint never finishes."""


def _eks_kueue() -> dict:
    return copy.deepcopy(read_stack_config(PROJECT_ROOT / "Pulumi.eks-kueue.yaml"))


def test_a_job_longer_than_the_drain_limit_runs_to_its_end_and_is_billed_for_it():
    """One 1,000-h job on eks-kueue's p5 block (longer than the 30-day limit, inside the 4,368-h window): the run
    lasts the pods' start + 1,000 h and pays those hours of the block's fee, $274,869.50 / 4,368 h × ~1,000 h =
    ~$62,928 (the old what-if stopped at its last event before the limit, 0.2 h, and billed $10.49 with no
    warning)."""
    res = simulate_jobs(cluster(_eks_kueue(), OPTS), [Job("long", 0, "pretraining", 8, run_s=1000 * H)], 0, OPTS)
    assert 1000 * H > DRAIN_LIMIT_S
    running = res.jobs["long"].running_s
    assert running is not None and running < 600  # the image pull on the block's node
    assert res.jobs["long"].end_s == pytest.approx(running + 1000 * H)
    assert res.horizon_s == pytest.approx(running + 1000 * H) and res.cut is None and not res.warnings
    hours = res.horizon_s / H
    assert pool_row(res.pools["p5"])["costUsd"] == pytest.approx(BLOCK_FEE / BLOCK_HOURS * hours, abs=0.01)


def test_a_run_with_a_job_that_can_never_finish_is_cut_and_billed_to_the_cut():
    """A 10-h spot job reclaimed every ~43 minutes restarts for ever: the run is cut once 30 days have passed with no
    job ended and the job running then has been stopped; it is billed as a horizon cut (the block's 2 nodes paid
    to the cut) and the warning names the job."""
    res = simulate_jobs(
        cluster(_eks_kueue(), SPOT_STORM), [Job("doomed", 0, "finetune", 1, run_s=10 * H, pool="l40s")], 0, SPOT_STORM
    )
    assert res.jobs["doomed"].end_s is None and len(res.jobs["doomed"].starts) > 100
    assert res.cut is not None and "30-day drain limit" in res.cut
    assert DRAIN_LIMIT_S <= res.horizon_s < DRAIN_LIMIT_S + 24 * H
    assert res.pools["p5"].paid_node_s == pytest.approx(BLOCK_NODES * res.horizon_s)
    assert any(f"cut at {res.horizon_s / H:,.1f} h" in w and "doomed" in w and "horizon cut" in w for w in res.warnings)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_a_cut_run_says_so_in_every_format(fmt, tmp_path, capsys):
    wl = tmp_path / "doomed.yaml"
    wl.write_text(
        "kind: jobs\njobs:\n  - {id: doomed, submitS: 0, queue: finetune, gpusPerNode: 1, runS: 36000, pool: l40s}\n"
    )
    assert (
        main(
            [
                "--stack",
                "eks-kueue",
                "--workload",
                str(wl),
                "--format",
                fmt,
                "--spot-interruptions-per-node-month",
                "1000",
                "--color",
                "never",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    if fmt == "json":
        report = json.loads(out)
        assert "30-day drain limit" in report["cutBy"] and report["unfinished"] == 1
        assert any("the run was cut at" in w for w in report["warnings"])
        assert any("30-day drain limit" in b for b in report["billing"])
    else:
        header = out.splitlines()[0] if fmt == "text" else out.splitlines()[2]
        assert "cut by the what-if's 30-day drain limit with 1 job(s) unfinished" in header
        assert ("WARNING: the run was cut at" if fmt == "text" else "**Warning:** the run was cut at") in out


def test_a_horizon_that_cuts_the_run_is_named():
    res = simulate_jobs(
        cluster(_eks_kueue(), SimOptions(spot_interruptions=False, horizon_s=5 * H)),
        [Job("long", 0, "pretraining", 8, run_s=10 * H)],
        0,
        SimOptions(spot_interruptions=False, horizon_s=5 * H),
    )
    assert res.cut == "--horizon-hours" and res.horizon_s == 5 * H


def test_a_job_killed_by_a_block_end_that_fits_no_other_pool_ends_the_run():
    """eks-kueue with one L40S node always up and an 8-GPU job of 5,010 h: the block's end kills it at 4,367.5 h and
    no other pool fits 8 GPUs on a node (the 1-GPU L40S pool is in the queue's quota but does not fit), so the run
    ends there and the L40S node is paid 4,367.5 h (the old what-if ran on to the killed job's stale end, 5,010 h,
    and billed the L40S node for all of it)."""
    cfg = _eks_kueue()
    cfg["gpu-cluster:nodePools"][1]["minNodes"] = 1
    res = simulate_jobs(cluster(cfg, OPTS), [Job("long", 0, "pretraining", 8, run_s=5010 * H)], 0, OPTS)
    assert res.jobs["long"].end_s is None
    assert res.horizon_s == pytest.approx(4367.5 * H) and res.cut is None
    assert res.pools["l40s"].paid_node_s == pytest.approx(4367.5 * H)
    assert pool_row(res.pools["p5"])["costUsd"] == BLOCK_FEE


def test_a_checkpointed_job_that_spot_reclaims_keep_restarting_runs_to_its_end():
    """A 2,000-h 1-GPU job on eks-kueue's spot L40S pool, checkpointing hourly, reclaimed about twice a node-month:
    each restart resumes from a checkpoint, so its remaining work shrinks, and the drain limit must not cut it (the
    old what-if cut it at 782 h: a job restarted after the deadline no longer counted as running)."""
    opts = SimOptions(spot_interruptions_per_node_month=2)
    job = Job("long", 0, "finetune", 1, run_s=2000 * H, pool="l40s", checkpoint_s=3600)
    res = simulate_jobs(cluster(_eks_kueue(), opts), [job], 0, opts)
    out = res.jobs["long"]
    assert res.cut is None and out.end_s is not None, res.warnings
    assert res.pools["l40s"].interruptions >= 2  # it was restarted, after the first deadline too
    assert out.end_s >= 2000 * H


def test_a_reclaimed_spot_node_kept_at_min_nodes_is_replaced():
    """eks-kueue's spot L40S pool at minNodes 2, one 1-GPU job for 200 h, a reclaim about every 7 h per node: the
    node group launches a replacement whenever a reclaim leaves it below its minimum, so two nodes are paid the whole
    run less each replacement's provisioning gap (the old what-if let the idle minimum node go for good)."""
    cfg = _eks_kueue()
    l40s = next(p for p in cfg["gpu-cluster:nodePools"] if p["name"] == "l40s")
    l40s["minNodes"] = 2
    opts = SimOptions(spot_interruptions_per_node_month=100)
    model = cluster(cfg, opts)
    job = Job("long", 0, "finetune", 1, run_s=200 * H, pool="l40s", checkpoint_s=600)
    res = simulate_jobs(model, [job], 0, opts)
    u = res.pools["l40s"]
    assert u.interruptions >= 10 and res.jobs["long"].end_s is not None
    end = res.horizon_s
    gaps = u.interruptions * model.pools["l40s"].provision_s
    assert u.paid_node_s == pytest.approx(2 * end - gaps, rel=0.02), (u.paid_node_s / H, end / H, gaps / H)
