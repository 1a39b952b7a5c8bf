"""The serving examples preview with exit 0 and print, per service, the fit, the evidence behind the SLO, capacity at
peak and the price ($/h at min and max replicas, $ per million output tokens at peak, the pool's $/GPU-h)."""

from __future__ import annotations

import functools

import pytest
from rich.console import Console

from catalog import load_catalog
from preview.engine import PROJECT_ROOT, read_stack_file
from preview.render.serving import print_serving
from preview.run import preview_stack
from stacks.plan.serving_cost import serving_rows
from stacks.plan.stack import plan_stack
from stacks.validate.load import decode_config, load_spec


@functools.cache
def _report(stack: str):
    return preview_stack(stack)


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving"])
def test_serving_examples_preview_with_exit_0(stack):
    report = _report(stack)
    assert report.exit_code == 0, [str(e) for e in report.errors] + [v["message"] for v in report.violations]
    assert report.as_dict()["serving"] == report.serving


def test_gke_chat_is_priced_at_min_max_and_per_million_tokens():
    row = next(r for r in _report("gke-serving").serving if r["service"] == "chat")
    # a3-highgpu-8g on-demand $88.49/h in us-central1 ÷ 8 GPUs = $11.061 per GPU-hour
    assert row["usdPerGpuHour"] == pytest.approx(11.0613, abs=1e-3)
    assert (row["usdPerHourMin"], row["usdPerHourMax"]) == (
        pytest.approx(22.12, abs=0.01),
        pytest.approx(88.49, abs=0.01),
    )
    # priced at what the rendered autoscaler runs through the peak hours as traffic climbs the daily profile: its
    # completion-rate trigger aims at 0.8 × 5,104 ÷ 200 = 20.42 req/s per replica; 120 req/s on 5 replicas (1.18,
    # outside the HPA's 10 % tolerance) -> 6; 135 on 6 (1.102 > 1.10) -> 7; 150 on 7 (1.049, inside) stays at 7
    assert row["replicasAtPeak"] == 7
    assert row["usdPerMillionOutputTokens"] == pytest.approx(7 * 88.49 / 8 / (150 * 200 * 3600) * 1e6, abs=1e-4)
    assert row["usdPerMillionOutputTokens"] == pytest.approx(0.717, abs=1e-3)
    assert row["evidence"].startswith("MLPerf Inference v5.1 Server, RedHat 5.1-0083")
    # KV cache for what a replica holds at the measured rate, ceil(25.52 × 200 × 0.0251) = 129 requests × 1,200
    # tokens, not the 413 that peak ÷ max replicas × the SLO latency asked: 16.9 GiB with the weights
    assert (row["neededGib"], row["budgetGib"]) == (16.9, 73.6)


def test_a_multi_node_service_is_a_leaderworkerset_priced_at_its_16_gpus():
    row = next(r for r in _report("gke-serving").serving if r["service"] == "long-context")
    assert (row["workload"], row["gpusPerReplica"], row["nodesPerReplica"]) == ("LeaderWorkerSet", 16, 2)
    assert row["usdPerHourMin"] == pytest.approx(16 * 88.49 / 8, abs=0.01)


def test_an_slo_a_few_percent_above_the_measured_p99_is_flagged_low_confidence():
    rows = {r["service"]: r for r in _report("gke-serving").serving}
    # chat: SLO TTFT 2000 ms against the row's 1911 ms p99 (TPOT 100 against 25.1): 4.7 % margin on MLPerf's shape
    assert rows["chat"]["sloMargin"] == pytest.approx(2000 / 1911 - 1, abs=1e-4) and rows["chat"]["lowConfidence"]
    assert rows["long-context"]["sloMargin"] > 0.10 and not rows["long-context"]["lowConfidence"]


def test_serving_is_priced_with_the_preview_billing_and_its_overrides():
    spec, _ = load_spec(decode_config(read_stack_file(PROJECT_ROOT / "Pulumi.gke-serving.yaml")))
    facts = list(plan_stack(spec, load_catalog()).facts)
    negotiated = [{"machineType": "a3-highgpu-8g", "usdPerNodeHour": 40.0, "source": "contract"}]
    row = next(r for r in serving_rows(spec, facts, negotiated) if r["service"] == "chat")
    assert row["usdPerGpuHour"] == 5.0 and row["usdPerHourMin"] == 10.0  # 2 replicas × 1 GPU × $40 / 8
    assert row["usdPerMillionOutputTokens"] == pytest.approx(7 * 5.0 / (150 * 200 * 3600) * 1e6, abs=1e-4)


def test_a_stack_without_serving_keeps_its_json_shape():
    assert "serving" not in _report("gke-kueue").as_dict()


def _serving_text(stack: str) -> str:
    console = Console(record=True, width=260)
    print_serving(console, _report(stack).serving)
    return console.export_text()


def test_a_reserved_pool_says_scaling_serving_down_saves_no_dollars():
    text = _serving_text("gke-serving")  # h100: a 6-node reservation billed whole
    assert "note: pool h100 is billed whole (a reservation)" in text
    assert "frees GPUs for training, not dollars" in text
    assert all(r["poolBilledWhole"] for r in _report("gke-serving").serving)
    # eks-serving's L40S pool is on-demand: scaling down does save its dollars
    assert not any(r["poolBilledWhole"] for r in _report("eks-serving").serving)
    assert "billed whole" not in _serving_text("eks-serving")


def test_one_replica_at_peak_is_printed_singular():
    text = _serving_text("gke-serving")
    assert "(1 replica)" in text and "(1 replicas)" not in text and "(7 replicas)" in text
