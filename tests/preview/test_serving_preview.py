"""The serving examples preview with exit 0 and print, per service, the fit, the evidence behind the SLO, capacity at
peak and the price ($/h at min and max replicas, $ per million output tokens at peak, the pool's $/GPU-h)."""
from __future__ import annotations

import functools

import pytest

from preview.run import preview_stack


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
    assert (row["usdPerHourMin"], row["usdPerHourMax"]) == (pytest.approx(22.12, abs=0.01), pytest.approx(88.49, abs=0.01))
    # peak 150 req/s ÷ 25.52 req/s per replica -> 6 replicas; 6 × $11.061 / (150 × 200 × 3600 tokens) × 1e6
    assert row["replicasAtPeak"] == 6
    assert row["usdPerMillionOutputTokens"] == pytest.approx(6 * 88.49 / 8 / (150 * 200 * 3600) * 1e6, abs=1e-3)
    assert row["evidence"].startswith("MLPerf Inference v5.1 Server, RedHat 5.1-0083")
    assert (row["neededGib"], row["budgetGib"]) == (37.7, 73.6)


def test_a_multi_node_service_is_a_leaderworkerset_priced_at_its_16_gpus():
    row = next(r for r in _report("gke-serving").serving if r["service"] == "long-context")
    assert (row["workload"], row["gpusPerReplica"], row["nodesPerReplica"]) == ("LeaderWorkerSet", 16, 2)
    assert row["usdPerHourMin"] == pytest.approx(16 * 88.49 / 8, abs=0.01)


def test_a_stack_without_serving_keeps_its_json_shape():
    assert "serving" not in _report("gke-kueue").as_dict()
