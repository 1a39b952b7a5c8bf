"""Time to running with honest uncertainty: every start-path factor and every provisioning row carries a low and a
high bound, each with its own source; where no source gives a bound it equals the typical value and says so (never
an invented spread). The preview shows the largest gang's cold and warm start as ``low–high (typical X)`` in text,
Markdown and JSON, and the what-if reports the same range per pool."""

from __future__ import annotations

import dataclasses
import json

import pytest

from catalog.provisioning import load_provisioning
from catalog.start_path import NO_RANGE, load_start_path, range_problems
from preview.render.markdown import render_markdown
from preview.render.pod_start import gang_cell, span_text
from preview.run import preview_stack
from stacks.plan.pod_start import PodStartPlan
from stacks.plan.start_time import factor_bounds, factors, overhead_s, pool_start

F = factors()
PLAN = PodStartPlan(
    pool="p",
    cloud=None,  # type: ignore[arg-type]
    images=(),
    streaming=False,
    boot_disk_image=None,
    prepull=False,
    fast_image_pull=False,
    max_parallel_pulls=None,
)


def test_a_bound_without_a_source_equals_the_typical_value():
    loaded = load_start_path()
    unsourced = [
        (f, side) for f in loaded.values() for side in ("low", "high") if getattr(f, f"{side}_source") == NO_RANGE
    ]
    assert unsourced  # pod_start_s, soci_speedup, compute_domain_s_per_pod have no published range
    assert all(getattr(f, side) == f.value for f, side in unsourced)
    assert loaded["pod_start_s"].low == loaded["pod_start_s"].high == 5


def test_an_invented_spread_or_a_bound_without_a_source_is_refused():
    pod = load_start_path()["pod_start_s"]
    invented = dataclasses.replace(pod, low=2.0)  # a spread whose source says there is none
    assert any("no source for a range" in p for p in range_problems(invented))
    unsourced = dataclasses.replace(pod, high=9.0, high_source="")
    assert any("high_source is empty" in p for p in range_problems(unsourced))
    assert range_problems(dataclasses.replace(pod, low=6.0, low_source="x")) != []  # low above the value
    assert range_problems(pod) == []


def test_each_sourced_bound_names_its_source():
    loaded = load_start_path()
    pull = loaded["pull_gb_per_s"]  # '15-20 GB take 4-6 minutes': 15 GB / 360 s and 20 GB / 240 s
    assert pull.low == pytest.approx(15 / 360, abs=1e-4) and pull.high == pytest.approx(20 / 240, abs=1e-4)
    assert "4-6 minutes" in pull.low_source and "4-6 minutes" in pull.high_source
    slurm = loaded["slurm_warm_start_s"]  # docs/benchmarks.md: min 2.02 s, median 2.814 s, p95 2.977 s
    assert (slurm.low, slurm.value, slurm.high) == (2.02, 2.814, 2.977)
    assert "benchmarks.md" in slurm.low_source and "p95" in slurm.high_source
    for row in load_provisioning().values():
        assert row.low_seconds <= row.provision_seconds <= row.high_seconds
        assert "2-5 min" in row.low_source and "15 minutes" in row.high_source


def test_the_short_bound_takes_the_fast_rate_and_the_long_bound_the_slow_one():
    b = factor_bounds()
    assert b.low["pull_gb_per_s"] > b.typical["pull_gb_per_s"] > b.high["pull_gb_per_s"]  # a rate: high is fast
    assert b.low["undeclared_pull_s"] < b.high["undeclared_pull_s"]  # a duration: low is short
    overridden = factor_bounds({"image_gb": 30})  # the user's value has no range
    assert overridden.low["image_gb"] == overridden.high["image_gb"] == 30


def test_an_undeclared_image_pulls_within_the_sources_four_to_six_minutes():
    # 'Standard Docker image pulls of 15-20 GB can take 4-6 minutes': pairing 15 GB with the fastest speed and 20 GB
    # with the slowest gave 180-480 s, wider than the source says.
    b = factor_bounds()
    undeclared = [pool_start(PLAN, 300, None, f).pull_s for f in (b.low, b.typical, b.high)]
    assert undeclared == [240, pytest.approx(257.3, abs=0.1), 360]
    declared = [pool_start(PLAN, 300, 30, f).pull_s for f in (b.low, b.high)]  # a size: the speed bounds
    assert declared == [pytest.approx(30 / (20 / 240), abs=1), pytest.approx(30 / (15 / 360), abs=1)]
    assert pool_start(PLAN, 300, None, b.typical).pull_how == "size undeclared, full pull"


def test_the_preview_shows_the_cold_start_as_a_range_in_json_text_and_markdown():
    report = preview_stack("gke-kueue")
    gang = {r["pool"]: r for r in json.loads(json.dumps(report.as_dict(), default=str))["podStart"]}["h100"][
        "largestGang"
    ]
    cold = gang["coldRangeS"]
    assert cold["typical"] == gang["coldS"]  # the figure the what-if simulates
    # streamed image: node 120-900 s (typical 300), streaming 2-20 s; admission and scheduling of 4 pods
    assert cold["low"] == pytest.approx(120 + 2 + 1 / 43 + 4 / 909 + 5, abs=0.1)
    assert cold["high"] == pytest.approx(900 + 20 + overhead_s(4, F), abs=0.1)
    cell = gang_cell(gang)
    assert "cold 2.1 min–15.4 min (typical 5.4 min)" in cell, cell
    md = render_markdown(report)
    assert "**Time to running**" in md and "| h100 | 4 | 2.1 min–15.4 min (typical 5.4 min) |" in md


def test_a_figure_without_a_range_is_shown_alone():
    assert span_text({"low": 5.0, "typical": 5.0, "high": 5.0}, 5.0) == "5 s"
    assert span_text(None, None) == "—"
    assert span_text({"low": 60.0, "typical": 300.0, "high": 900.0}, 300.0) == "60 s–15.0 min (typical 5.0 min)"


def test_the_what_if_reports_the_previews_range_for_each_pool():
    from whatif.api import cluster_of, load_stack_spec
    from whatif.metrics import summarize
    from whatif.model import SimOptions, Workload
    from whatif.run import simulate_jobs

    opts = SimOptions(spot_interruptions=False)
    model = cluster_of(load_stack_spec("gke-kueue"), "gke-kueue", opts)
    report = summarize(simulate_jobs(model, [], 0, opts), model, Workload("w", "jobs", []), 0)
    preview = {r["pool"]: r["largestGang"] for r in preview_stack("gke-kueue").pod_start}
    by_pool = report["timeToRunning"]["coldStartByPool"]
    assert set(by_pool) == set(preview)
    for pool, r in by_pool.items():
        assert {k: r[k] for k in ("low", "typical", "high")} == preview[pool]["coldRangeS"]
        assert r["pods"] == preview[pool]["pods"]
