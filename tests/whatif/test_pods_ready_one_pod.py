"""Kueue's ``waitForPodsReady`` applies to every admitted workload, one pod too (kueue v0.19.2
apis/config/v1beta2/configuration_types.go ``WaitForPodsReady``). Hand case: one a3-highgpu-8g node from zero
(provisioning 300 s), a 30 GB image pulled in full (514.6 s), pod start ~5 s: pods run at ~819.6 s, past a 600 s
timeout. The preview flags it (in the pod start cell and as a warning) and the what-if, which evicts it at 600 s,
reports the eviction (a count and a warning) in every format. Also: the measured Slurm warm start (64 nodes) is shown
only for multi-node gangs, labelled with the size it was measured at."""

from __future__ import annotations

import pytest

from catalog import load_catalog
from preview.render.pod_start import gang_cell
from preview.advice import pods_ready_warnings
from stacks.plan.facts import pool_facts
from stacks.plan.pod_start import pod_start_plan
from stacks.plan.start_time import largest_gang, pod_start_rows
from tests.support.whatif.stacks import cluster, h100_pool, kueue_config
from whatif.api import load_stack_spec
from whatif.metrics import summarize
from whatif.model import Job, SimOptions, Workload
from whatif.report.markdown import render_markdown
from whatif.report.text import render_text
from whatif.run import simulate_jobs

OPTS = SimOptions(spot_interruptions=False)


def one_big_image_node() -> dict:
    pool = {**h100_pool(1, multi=False, min_nodes=0), "podStart": {"imageSizeGb": 30}}
    return kueue_config(
        [pool], [{"name": "team", "quotas": [{"pool": "h100", "gpus": 8}]}], gang={"timeoutSeconds": 600}
    )


def test_a_single_pod_cold_start_over_the_timeout_is_flagged_in_the_preview():
    spec = load_stack_spec(one_big_image_node())
    cat = load_catalog()
    plans = [pod_start_plan(spec.cloud, p) for p in spec.node_pools]
    facts = [pool_facts(spec, p, cat) for p in spec.node_pools]
    rows = pod_start_rows(spec, plans, facts)
    gang = rows[0]["largestGang"]
    assert gang["pods"] == 1 and gang["coldS"] == pytest.approx(819.6, abs=0.1)
    assert gang["overPodsReadyTimeoutS"] == 600  # before: only gangs of more than one pod were flagged
    assert "! cold start over waitForPodsReady (600 s)" in gang_cell(gang)
    [warning] = pods_ready_warnings(spec, rows)
    assert warning.warning and warning.path == "gpu-cluster:scheduling.gang.timeoutSeconds" and warning.value == 600
    assert "1 pod" in warning.problem and "819.6 s" in warning.problem and "evicts it at the timeout" in warning.problem


def test_the_what_if_reports_the_pods_ready_eviction_it_simulates():
    c = cluster(one_big_image_node(), OPTS)
    jobs = [Job("big", 0, "team", 8, run_s=3600)]
    res = simulate_jobs(c, jobs, 0, OPTS)
    assert res.jobs["big"].starts == (300.0, 660.0)  # evicted at 600 s, readmitted after the 60 s backoff
    assert res.preemptions == 0 and res.pods_ready_evictions == 1  # before: no count anywhere
    report = summarize(res, c, Workload("w", "jobs", jobs), 0)
    assert report["preemptions"]["podsReadyEvictions"] == 1
    [warning] = report["warnings"]  # before: no warning
    assert "waitForPodsReady evicted 1 time(s)" in warning and "big" in warning and "600 s" in warning
    assert "pods-ready evictions: 1" in render_text(report, color=False)
    assert "Pods-ready evictions: 1." in render_markdown(report)


def test_a_run_without_a_pods_ready_eviction_says_nothing_about_it():
    cfg = one_big_image_node()
    cfg["scheduling"]["gang"] = {"timeoutSeconds": 900}
    c = cluster(cfg, OPTS)
    jobs = [Job("big", 0, "team", 8, run_s=3600)]
    report = summarize(simulate_jobs(c, jobs, 0, OPTS), c, Workload("w", "jobs", jobs), 0)
    assert report["preemptions"]["podsReadyEvictions"] == 0 and report["warnings"] == []
    assert "pods-ready evictions" not in render_text(report, color=False)


def test_the_measured_slurm_warm_start_is_shown_only_for_multi_node_gangs():
    from preview.run import preview_stack

    rows = {r["pool"]: r["largestGang"] for r in preview_stack("gke-h100-512").pod_start}
    big, one = rows["h100-mega"], rows["l4-eval"]
    assert big["pods"] == 64 and big["warmS"] == pytest.approx(2.8, abs=0.05) and "at this size" in big["warmMeasured"]
    assert big["warmRangeS"] == {"low": 2.0, "typical": 2.8, "high": 3.0}  # min and p95 of the 10 runs
    assert one["pods"] == 1 and one["warmS"] is None  # before: 2.8 s, the 64-node figure on a 1-pod pool
    assert "not measured for a 1-node Slurm job" in one["warmMeasured"] and "warm —" in gang_cell(one)


def test_a_smaller_slurm_gang_is_told_the_measurement_is_of_64_nodes():
    spec = load_stack_spec("gke-h100-512")
    pool = spec.node_pools[0].model_copy(update={"max_nodes": 8, "min_nodes": 8})
    g = largest_gang(spec, pool, pod_start_plan(spec.cloud, pool), pool_facts(spec, pool, load_catalog()))
    assert g["pods"] == 8 and "at 64 nodes, not at this gang's 8" in g["warmMeasured"]
