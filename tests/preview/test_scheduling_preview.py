"""The scheduling section of the offline preview: quotas per queue, pool and GPU model, borrowing, the cohort, the
promised share of each pool, and $/hour of each team's nominal quota."""

from __future__ import annotations

import json

import pytest

from preview.render.markdown import render_markdown
from preview.render.text import render_text
from preview.run import preview_config, preview_stack
from tests.support.spec.edit import edits
from tests.support.spec.scheduling_fixtures import GKE_TEAMS, flat_config
from tests.support.spec.stack_configs import GKE


@pytest.fixture(scope="module")
def report():
    return preview_stack("gke-kueue")


def test_json_has_each_queue_quota_with_pool_gpu_model_and_limits(report):
    data = json.loads(json.dumps(report.as_dict(), default=str))["queues"]
    assert data["cohort"] == "ml" and data["workload"] == "kubeflow" and data["gangTimeoutSeconds"] == 900
    rows = {(q["queue"], q["pool"]): q for q in data["quotas"]}
    research = rows[("research", "h100")]
    assert (research["gpus"], research["gpu_model"], research["lending_limit"], research["borrowing_limit"]) == (
        24,
        "H100_80GB",
        8,
        None,
    )
    assert rows[("product", "h100")]["borrowing_limit"] == 16 and rows[("product", "h100")]["namespace"] == "product-ml"
    pools = {p["pool"]: p for p in data["pools"]}
    assert (pools["h100"]["capacity_gpus"], pools["h100"]["promised_gpus"], pools["h100"]["share"]) == (32, 32, 1.0)
    assert pools["h100"]["placement"].startswith("TAS gke-network")
    assert pools["l4"]["placement"].startswith("autoscaled (0-8 nodes)")


def test_dollars_per_hour_of_each_teams_nominal_quota(report):
    usd = {p.pool: p.usd_per_gpu_hour for p in report.cost.pools}
    expected = {"research": 24 * usd["h100"] + 8 * usd["l4"], "product": 8 * usd["h100"] + 8 * usd["l4"]}
    assert report.queues.queue_usd_per_hour() == pytest.approx(expected)
    assert expected["research"] > 250  # 24 H100s at list price: a number a reviewer recognises


def test_text_and_markdown_show_the_queues(report):
    text = render_text(report, color=False, width=200)
    assert "Queues (GPU quota per pool" in text and "Promised capacity per pool" in text
    assert "cohort ml (borrowing, lending, fair sharing)" in text
    research = next(line for line in text.splitlines() if "│ research" in line)
    assert "h100" in research and "24" in research and "no limit" in research
    md = render_markdown(report)
    assert "| research | research | h100 | H100_80GB | 24 | no limit | 8 |" in md
    assert "| h100 | H100_80GB | 32 | 32 | 100% | TAS gke-network: preferred block |" in md


def test_overcommitted_pool_shows_more_than_its_capacity():
    raw = edits(GKE_TEAMS, {"scheduling.overcommit": True, "scheduling.queues[0].quotas[0].gpus": 30})
    report = preview_config("over", {**flat_config(raw), "gpu-cluster:project": "ml-platform-prod"})
    h100 = next(p for p in report.queues.pools if p.pool == "h100")
    assert (h100.promised_gpus, h100.overcommitted, f"{h100.share:.0%}") == (38, True, "119%")
    assert "**119%**" in render_markdown(report)


def test_a_stack_without_scheduling_has_no_queue_section():
    report = preview_config("plain", GKE)
    assert report.queues is None and report.as_dict()["queues"] is None
    assert "Queues" not in render_text(report, color=False)
