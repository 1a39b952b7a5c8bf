"""Time to all pods running (what a user waits for, not only admission): the catalog's start-path factors with their
sources, the per-pool cold pull (full, SOCI, streamed, preloaded), the what-if's per-job figure (cold node: pull; warm
node: none; pre-pull warms idle nodes), its p50/p95 per job size, the preview's largest-gang estimate, and the user's
overrides."""

from __future__ import annotations

import json

import pytest

from catalog.start_path import load_start_path
from stacks.plan.pod_start import PodStartPlan
from stacks.plan.start_time import factors, gang_seconds, overhead_s, pool_start
from tests.support.whatif.stacks import cluster, kueue_config, l4_pool
from whatif.__main__ import main
from whatif.metrics import summarize
from whatif.model import Job, SimOptions, Workload
from whatif.run import simulate_jobs

F = factors()


def plan(**kw) -> PodStartPlan:
    base = dict(
        pool="p",
        cloud=None,
        images=(),
        streaming=False,
        boot_disk_image=None,
        prepull=False,
        fast_image_pull=False,
        max_parallel_pulls=None,
    )
    return PodStartPlan(**{**base, **kw})  # type: ignore[arg-type]


def test_every_factor_is_sourced_derived_or_a_labelled_assumption():
    loaded = load_start_path()
    assert {f.kind for f in loaded.values()} <= {"sourced", "derived", "assumption"}
    assert loaded["image_gb"].kind == "assumption" and "override" in loaded["image_gb"].source
    assert loaded["pod_start_s"].value == 5 and "pod_startup_latency" in loaded["pod_start_s"].source


def test_the_cold_pull_follows_the_pools_pod_start_settings():
    full = 15 / F["pull_gb_per_s"]
    assert pool_start(plan(), 300, None, F).pull_s == pytest.approx(full)  # ~257 s for the assumed 15 GB
    assert pool_start(plan(), 300, 30, F).pull_s == pytest.approx(2 * full)  # podStart.imageSizeGb
    assert pool_start(plan(fast_image_pull=True), 300, None, F).pull_s == pytest.approx(full / 3)
    assert pool_start(plan(boot_disk_image="global/images/x"), 300, None, F).pull_s == 0


def test_a_gang_cold_adds_the_node_and_the_pull_and_a_compute_domain_scales_with_pods():
    start = pool_start(plan(), 300, None, F)
    warm = gang_seconds(start, 64, False, F)
    assert warm == pytest.approx(1 / 43 + 64 / 333 + 5)
    assert gang_seconds(start, 64, True, F) == pytest.approx(300 + start.pull_s + warm)
    assert overhead_s(256, F, compute_domain=True) - overhead_s(256, F) == pytest.approx(480)  # ~8 min, upstream #816


def test_overrides_replace_factors_and_unknown_names_are_refused():
    assert factors({"image_gb": 30})["image_gb"] == 30
    with pytest.raises(KeyError, match="allowed"):
        factors({"imagegb": 30})


FIXED = SimOptions(nodes_up="max", spot_interruptions=False)


def test_the_first_job_on_a_node_pulls_and_the_next_finds_the_image():
    cfg = kueue_config([l4_pool(1, min_nodes=1)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}])
    c = cluster(cfg, FIXED)
    jobs = [Job("cold", 0, "a", 2, run_s=1000), Job("warm", 10, "a", 2, run_s=100)]
    res = simulate_jobs(c, jobs, 0, FIXED)
    pull = c.pools["l4"].pull_s
    assert pull == pytest.approx(15 / F["pull_gb_per_s"])
    assert res.jobs["cold"].running_s == pytest.approx(0 + pull + overhead_s(1, F))
    cold_end = res.jobs["cold"].running_s + 1000  # the work counts from the pods running
    assert res.jobs["warm"].running_s == pytest.approx(cold_end + overhead_s(1, F))  # same node, image there
    report = summarize(res, c, Workload("w", "jobs", jobs), 0)
    assert report["timeToRunning"]["bySize"]["2-8 GPUs"]["jobs"] == 2
    assert report["timeToRunning"]["bySize"]["2-8 GPUs"]["p95S"] > report["waits"]["bySize"]["2-8 GPUs"]["p95S"]


def test_pre_pull_warms_an_idle_node():
    pool = {**l4_pool(1, min_nodes=1), "podStart": {"prepull": True, "images": ["nvcr.io/nvidia/pytorch:25.01-py3"]}}
    cfg = kueue_config([pool], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}])
    c = cluster(cfg, FIXED)
    assert c.pools["l4"].prepull
    res = simulate_jobs(c, [Job("late", 1000, "a", 2, run_s=100)], 0, FIXED)
    assert res.jobs["late"].running_s == pytest.approx(1000 + overhead_s(1, F))


def test_the_cli_takes_overrides_and_refuses_unknown_ones(capsys):
    args = ["--stack", "dev", "--workload", "workloads/dev.yaml", "--format", "json", "--horizon-hours", "24"]
    assert main([*args, "--assume", "image_gb=40"]) == 0
    assert json.loads(capsys.readouterr().out)["timeToRunning"]["bySize"]
    assert main([*args, "--assume", "image=40", "--assume", "image_gb=x"]) == 2
    err = capsys.readouterr().err
    assert err.count("error: --assume") == 2 and "allowed:" in err and "image_gb" in err


def test_the_preview_estimates_the_largest_gang_cold_and_warm():
    from preview.run import preview_stack

    rows = {r["pool"]: r for r in json.loads(json.dumps(preview_stack("gke-kueue").as_dict(), default=str))["podStart"]}
    h100 = rows["h100"]["largestGang"]
    assert h100["pods"] == 4 and h100["image"] == "streamed (image streaming)"
    assert h100["coldS"] == pytest.approx(300 + 20 + overhead_s(4, F), abs=0.1)
    assert h100["warmS"] == pytest.approx(overhead_s(4, F), abs=0.1)


def test_pods_ready_is_judged_when_the_pods_run_not_when_they_are_placed():
    # waitForPodsReady counts from admission to all pods Ready: node provisioning (300 s) and a 30 GB pull (514.6 s)
    # put the pods at ~819.6 s, past the 600 s timeout, so Kueue evicts at 600 s and requeues after its 60 s backoff
    opts = SimOptions(spot_interruptions=False, assume={"image_gb": 30})
    cfg = kueue_config(
        [l4_pool(1)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}], gang={"timeoutSeconds": 600}
    )
    c = cluster(cfg, opts)
    assert 300 + c.pools["l4"].pull_s == pytest.approx(814.6, abs=0.1)
    res = simulate_jobs(c, [Job("big-image", 0, "a", 2, run_s=3600)], 0, opts)
    job = res.jobs["big-image"]
    assert job.starts == (300.0, 660.0)  # before: (300.0,), never evicted although not running at 600 s
    assert job.preemptions == 0 and res.preemptions == 0  # a timeout, not a preemption
    assert job.end_s == pytest.approx(job.running_s + 3600)  # the work starts once the pods run
    # the second start finds the image the first one pulled: its pods run once that pull is done
    assert job.running_s == pytest.approx(300 + c.pools["l4"].pull_s + overhead_s(1, F))


def test_a_slurm_stacks_warm_start_is_the_measured_512_gpu_sbatch_path():
    from preview.run import preview_stack

    report = json.loads(json.dumps(preview_stack("gke-h100-512").as_dict(), default=str))
    gang = {r["pool"]: r for r in report["podStart"]}["h100-mega"]["largestGang"]
    assert gang["pods"] == 64
    # before: 6.2 s, Kueue admission + kube-scheduler + the pod SLO, which a job on running slurmd pods never passes
    assert gang["warmS"] == pytest.approx(2.8, abs=0.05) and "real Slurm" in gang["warmMeasured"]
    assert load_start_path()["slurm_warm_start_s"].source.startswith("measured here")
