"""The serving what-if against cases worked out by hand: below the measured rate the latency is the row's p99 (the model
has no service time: an upper bound, not the low-load latency), the queue at and past the
measured throughput, and a reclaim whose timing follows Kueue's rules (the serving pod preempts the newest borrowing
training job in its admission cycle; the GPUs are free after the job's grace period; the replica then starts)."""

from __future__ import annotations

import math

import pytest

from catalog import load_catalog
from stacks.plan.serving import model_card, replica_start
from stacks.plan.stack import plan_stack
from tests.support.spec.edit import edits
from whatif.serving.__main__ import main
from whatif.serving.queue import step
from whatif.serving.report import verdict
from whatif.serving.sim import SimResult, TrainingLoad, simulate
from whatif.stack import load_stack_spec, read_stack_config, stack_path

TTFT, TPOT = 1.911, 0.0251  # RedHat 5.1-0083, llama3.1-8b on one H100, p99 at 5,104 output tok/s
MU = 5104 / 200  # req/s per replica at 200 output tokens = 25.52


def test_below_the_measured_rate_latency_stays_at_the_rows_p99():
    # no low-load latency is sourced: 1 req/s on two replicas keeps the p99 measured at 25.52 req/s each (an upper
    # bound; a lightly loaded server is faster), and nothing queues
    m = step(0.0, arrivals_per_s=1.0, capacity_per_s=2 * MU, ttft_s=TTFT, tpot_s=TPOT)
    assert (m.backlog, m.ttft_p99_s, m.tpot_p99_s, m.served) == (0.0, TTFT, TPOT, 60.0)


def test_at_the_measured_throughput_nothing_queues():
    backlog = 0.0
    for _ in range(60):  # an hour exactly at capacity
        m = step(backlog, arrivals_per_s=MU, capacity_per_s=MU, ttft_s=TTFT, tpot_s=TPOT)
        backlog = m.backlog
    assert backlog == pytest.approx(0.0, abs=1e-9) and m.ttft_p99_s == pytest.approx(TTFT)


def test_past_the_measured_throughput_the_backlog_grows_linearly():
    backlog = 0.0
    for minute in range(1, 4):  # 5 req/s over capacity: 300 more requests waiting each minute
        m = step(backlog, arrivals_per_s=MU + 5, capacity_per_s=MU, ttft_s=TTFT, tpot_s=TPOT)
        backlog = m.backlog
        assert backlog == pytest.approx(300.0 * minute)
        assert m.ttft_p99_s == pytest.approx(TTFT + 300.0 * minute / MU)  # 1.911 + 11.76 s after one minute
    assert m.tpot_p99_s == TPOT  # decode speed is the batch's, not the queue's


def _step_day_stack():
    """gke-serving with 12 quiet hours (10 % of peak) then 12 at peak."""
    cfg = edits(
        read_stack_config(stack_path("gke-serving")),
        {("serving", "services", 0, "traffic", "dailyProfile"): [0.1] * 12 + [1.0] * 12},
    )
    spec = load_stack_spec(cfg)
    return spec, {f.name: f for f in plan_stack(spec, load_catalog()).facts}


def test_a_reclaim_follows_kueue_timing_and_loses_work_since_the_last_checkpoint():
    spec, facts = _step_day_stack()
    load = TrainingLoad("h100", gpus_per_job=2, checkpoint_minutes=7, termination_grace_seconds=30)
    result = simulate(spec, facts, [load], hours=24)
    svc = next(s for s in result.services if s.name == "chat")
    (pool,) = result.pools
    ups = [e for e in svc.scale_up_events if e[0] == 720]  # the step at 12:00
    assert len(ups) == 6  # 150 req/s waiting on 2 replicas: the waiting trigger asks for max (8)
    svc_spec = spec.serving.services[0]
    start = replica_start(spec.cloud, spec.node_pools[0], svc_spec, model_card(svc_spec), node_running=True)
    expected_ready = 720 + math.ceil(30 / 60) + math.ceil(start.total_s / 60)
    assert {ready for _, ready, reclaimed in ups if reclaimed} == {expected_ready}
    # training filled its 24 nominal GPUs and borrowed 6 (serving's lendingLimit: 24 max - 18 min) at minute 0; the
    # 6 new replicas take those 6 GPUs back: 3 borrowing 2-GPU jobs preempted, each 720 mod 7 = 6 minutes past its
    # last checkpoint: 3 × 2 GPUs × 6 min = 36 GPU-minutes lost
    assert pool.preempted_jobs == 3
    assert pool.lost_gpu_minutes == 36


def test_a_service_without_evidence_is_not_simulated_and_the_answer_names_it():
    cfg = edits(
        read_stack_config(stack_path("gke-serving")),
        {("serving", "services", 0, "slo"): {"ttftP99Ms": 300, "tpotP99Ms": 20}},
    )
    spec = load_stack_spec(cfg)
    result = simulate(spec, {f.name: f for f in plan_stack(spec, load_catalog()).facts}, [], hours=1)
    assert [s.name for s in result.services] == ["long-context"] and result.no_evidence == ["chat"]
    assert verdict(result)[1].endswith("; not simulated (no evidence): chat")
    assert verdict(SimResult(1, no_evidence=["chat"])) == (
        None,
        "no service could be simulated: no measured throughput for its model, GPU and SLO (no evidence)",
    )


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving"])
def test_examples_report_attainment_and_training_utilization(stack, capsys):
    import json

    assert main(["--stack", stack, "--workload", f"workloads/serving/{stack}.yaml", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["services"] and all(0 < s["ttftAttainment"] <= 1 for s in out["services"])
    assert all("trainingUtilization" in p for p in out["pools"])
    assert out["answer"]["holdsSloAtHighUtilization"] in (True, False)
    assert out["answer"]["why"].startswith(("yes:", "no:"))


def test_the_what_ifs_price_per_token_is_labelled_an_average_not_the_previews_peak(capsys):
    assert main(["--stack", "gke-serving", "--workload", "workloads/serving/gke-serving.yaml"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if "per million output tokens" in x]
    assert lines and all("per million output tokens (average over the simulated hours" in x for x in lines)


def test_the_answer_carries_the_low_confidence_flag_of_a_thin_slo_margin(capsys):
    import json

    assert main(["--stack", "gke-serving", "--workload", "workloads/serving/gke-serving.yaml", "--format", "json"]) == 0
    answer = json.loads(capsys.readouterr().out)["answer"]
    # chat: 2000 ms SLO against the row's 1911 ms p99 TTFT, 4.7 % margin (< 10 %)
    assert answer["lowConfidence"] is True
    assert "LOW CONFIDENCE: chat's SLO is only 4.7% above" in answer["why"]
