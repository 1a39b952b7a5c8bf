"""Kueue and cost semantics on small hand-computed cases, each of which an earlier simulator got wrong (so a regression
shows): preemption on topology-placed (TAS) pools, reclaimWithinCohort with fair sharing, the minimal victim set
(Kueue's fill-back), the queue position of a preempted workload, the configured fair-sharing strategies, and the cost
arithmetic (total idle $, unrounded totals, nodes billed until scale-down)."""

from __future__ import annotations

import pytest

from render.kueue_config import FAIR_SHARING_STRATEGIES
from tests.support.whatif.stacks import COLD, WARM, cluster, h100_pool, kueue_config, l4_pool, pods_run_after_s
from whatif.metrics import summarize
from whatif.model import Job, PoolUsage, SimOptions, SimResult, Workload
from whatif.kueue.sched import EVICTION_S
from whatif.run import simulate_jobs

FIXED = SimOptions(nodes_up="max", spot_interruptions=False)
CLASSES = [{"name": "high", "value": 100}, {"name": "mid", "value": 50}, {"name": "low", "value": 1}]


def run(cfg, jobs, options=FIXED):
    return simulate_jobs(cluster(cfg, options), jobs, 0, options)


def test_a_full_tas_pool_is_preempted_by_priority():
    cfg = kueue_config(
        [h100_pool(2)],
        [{"name": "a", "quotas": [{"pool": "h100", "gpus": 16}]}],
        priorityClasses=CLASSES,
        topology={"mode": "required", "level": "block"},
    )
    assert cluster(cfg, FIXED).pools["h100"].block_nodes  # the pool really is placed by block
    jobs = [
        Job("low", 0, "a", 8, nodes=2, run_s=10_000, priority="low"),
        Job("high", 100, "a", 8, nodes=2, run_s=100, priority="high"),
    ]
    res = run(cfg, jobs)
    # admitted once low's pods are gone (before: the TAS pool was skipped, high waited until 10,000 s)
    assert res.jobs["high"].start_s == 100 + EVICTION_S
    # high's pods wait for the pull low's start began at 0, then run 100 s; low restarts then
    assert res.jobs["low"].preemptions == 1
    assert res.jobs["low"].starts == pytest.approx((0, pods_run_after_s(2) + 100))


def two_teams(reclaim: str) -> dict:
    queues = [
        {"name": "a", "quotas": [{"pool": "l4", "gpus": 4}]},
        {"name": "b", "quotas": [{"pool": "l4", "gpus": 4}]},
    ]
    return kueue_config([l4_pool(4, min_nodes=4)], queues, cohort="c", preemption={"reclaimWithinCohort": reclaim})


@pytest.mark.parametrize(
    "reclaim, b_start, preempted",
    [("Never", COLD + 5000, 0), ("Any", 100 + EVICTION_S, 1)],  # Never: until an a job ends, 5,000 s after its pull
    ids=["Never", "Any"],
)
def test_reclaim_within_cohort_is_honoured_with_fair_sharing(reclaim, b_start, preempted):
    jobs = [Job(f"a{i}", 0, "a", 2, run_s=5000) for i in range(4)] + [Job("b1", 100, "b", 2, run_s=100)]
    res = run(two_teams(reclaim), jobs)
    assert cluster(two_teams(reclaim), FIXED).kueue.fair_sharing
    assert res.jobs["b1"].start_s == pytest.approx(
        b_start
    )  # before: Never was ignored under fair sharing (b1 started at 100)
    assert sum(res.jobs[f"a{i}"].preemptions for i in range(4)) == preempted


def test_only_the_victims_needed_are_evicted():
    # 3 nodes x 2 GPUs, quota 6: low (1 GPU) and mid (2 GPUs) are both lower than the incoming high (2 GPUs); taking
    # low first is not enough, taking mid too is, and then low is not needed any more (Kueue adds it back)
    cfg = kueue_config(
        [l4_pool(3, min_nodes=3)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 6}]}], priorityClasses=CLASSES
    )
    jobs = [
        Job("filler", 0, "a", 1, run_s=9000, priority="high"),
        Job("other", 0, "a", 2, run_s=9000, priority="high"),
        Job("mid", 0, "a", 2, run_s=9000, priority="mid"),
        Job("low", 0, "a", 1, run_s=9000, priority="low"),
        Job("incoming", 100, "a", 2, run_s=100, priority="high"),
    ]
    res = run(cfg, jobs)
    assert res.jobs["incoming"].start_s == 100 + EVICTION_S
    assert res.jobs["mid"].preemptions == 1
    assert res.jobs["low"].preemptions == 0  # before: low was evicted too


def test_a_preempted_workload_keeps_its_place_in_the_queue():
    cfg = kueue_config(
        [l4_pool(1, min_nodes=1)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}], priorityClasses=CLASSES
    )
    jobs = [
        Job("first", 0, "a", 2, run_s=1000, priority="low"),
        Job("second", 10, "a", 2, run_s=100, priority="low"),
        Job("urgent", 20, "a", 2, run_s=100, priority="high"),
    ]
    res = run(cfg, jobs)
    # creation time orders it ahead of "second" (before: behind it); urgent's pods wait for the pull first's start
    # began at 0 and run 100 s, first's pods then start on a node with the image and run 1,000 s
    assert res.jobs["first"].starts == pytest.approx((0, COLD + 100))
    assert res.jobs["second"].start_s == pytest.approx(COLD + 100 + WARM + 1000)


def test_the_configured_fair_sharing_strategies_reach_the_model_in_order():
    c = cluster(two_teams("Any"), FIXED)
    assert c.kueue.strategies == tuple(FAIR_SHARING_STRATEGIES)
    assert c.kueue.requeue_timestamp == "Eviction"


def _result(*pools: PoolUsage) -> SimResult:
    return SimResult("kueue", 3600.0, {}, {p.pool: p for p in pools})


def _summary(result: SimResult) -> dict:
    c = cluster(kueue_config([l4_pool(1)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}]), FIXED)
    return summarize(result, c, Workload("w", "jobs", []), 0)


def test_the_total_idle_cost_is_the_sum_of_the_pools_idle_cost():
    busy = PoolUsage("h100", 8, 80.0, paid_node_s=3600, allocated_gpu_s=8 * 3600)  # $80, fully used
    idle = PoolUsage("l4", 1, 1.0, paid_node_s=36000, allocated_gpu_s=0)  # $10, all idle
    report = _summary(_result(busy, idle))
    assert [p["idleCostUsd"] for p in report["pools"]] == [0.0, 10.0]
    assert report["total"]["idleCostUsd"] == 10.0  # before: a blended price, 90 × (1 - 8/18) = 50.0


def test_totals_are_summed_before_rounding():
    pools = [PoolUsage(f"p{i}", 1, 1.0, paid_node_s=10, allocated_gpu_s=0) for i in range(3)]  # 0.0028 GPU-h each
    report = _summary(_result(*pools))
    assert [p["paidGpuHours"] for p in report["pools"]] == [0.0, 0.0, 0.0]
    assert report["total"]["paidGpuHours"] == 0.01  # before: 0.0 (the sum of rounded rows)


def test_a_node_stays_billed_after_the_last_job_until_scale_down():
    cfg = kueue_config([l4_pool(2)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 4}]}])
    opts = SimOptions(spot_interruptions=False)
    res = run(cfg, [Job("j", 0, "a", 2, run_s=3600)], opts)
    assert res.jobs["j"].start_s == 300
    assert res.pools["l4"].paid_node_s == pytest.approx(
        300 + COLD + 3600 + 600
    )  # before: 3900 + COLD, the node was free after the last job


def reclaim_or_preempt() -> dict:
    pools = [l4_pool(1, name="p1", min_nodes=1), l4_pool(1, name="p2", min_nodes=1)]
    queues = [
        {"name": "a", "quotas": [{"pool": "p1", "gpus": 2}, {"pool": "p2", "gpus": 2}]},
        {"name": "b", "quotas": [{"pool": "p2", "gpus": 0}]},
    ]
    return kueue_config(
        pools,
        queues,
        cohort="c",
        priorityClasses=CLASSES,
        preemption={"withinQueue": "LowerPriority", "reclaimWithinCohort": "LowerPriority"},
    )


def test_the_flavor_where_the_workload_reclaims_wins_over_one_where_it_preempts_its_own_queue():
    # Kueue's flavor assigner (scheduler_test.go "prefer reclamation over cq priority based preemption"): p1 needs
    # a's own low job preempted, p2 only reclaims what b borrows; p2 wins although p1 comes first
    jobs = [
        Job("own-low", 0, "a", 2, run_s=9000, priority="low"),
        Job("b-borrow", 1, "b", 2, run_s=9000, priority="low"),
        Job("high", 100, "a", 2, run_s=100, priority="high"),
    ]
    res = run(reclaim_or_preempt(), jobs)
    assert res.jobs["high"].start_s == 100 + EVICTION_S
    assert res.jobs["b-borrow"].preemptions == 1
    assert res.jobs["own-low"].preemptions == 0  # before: the first flavor with victims, p1, evicted own-low


def test_only_nodes_of_topology_placed_pools_retry_inadmissible_workloads(monkeypatch):
    # "wait" cannot be admitted while "hold" runs (quota full, no lower-priority victim) and is parked. Kueue retries
    # inadmissible workloads on a release, and on node events only for TAS flavors (v0.19.2
    # pkg/controller/tas/resource_flavor.go): the L4 node that boots for "small" must not retry it (before: it did)
    import whatif.kueue.sched as sched

    decided: list[str] = []
    real = sched.choose
    monkeypatch.setattr(
        sched,
        "choose",
        lambda view, inc, nodes_fit: (decided.append(names[inc.order_ts]), real(view, inc, nodes_fit))[1],
    )
    cfg = kueue_config(
        [h100_pool(2), l4_pool(2)],
        [{"name": "a", "quotas": [{"pool": "h100", "gpus": 16}, {"pool": "l4", "gpus": 4}]}],
        topology={"mode": "preferred", "level": "block"},
    )
    options = SimOptions(spot_interruptions=False)
    model = cluster(cfg, options)
    assert model.pools["h100"].block_nodes and not model.pools["l4"].block_nodes
    jobs = [
        Job("hold", 0, "a", 8, nodes=2, run_s=10_000, pool="h100"),
        Job("wait", 10, "a", 8, nodes=1, run_s=100, pool="h100"),
        Job("small", 20, "a", 2, run_s=100, pool="l4"),
    ]
    names = {j.submit_s: j.id for j in jobs}
    res = simulate_jobs(model, jobs, 0, options)
    assert res.jobs["small"].start_s > 20  # its L4 node booted while "wait" was parked
    # decided at submission, after small's release (420 s), after hold's (10,000 s): not when the L4 node came up
    assert decided.count("wait") == 3
    assert res.jobs["wait"].start_s == pytest.approx(pods_run_after_s(2) + 10_000)  # hold's pods, then its run


def test_a_preemptor_heads_its_queue_until_its_victims_pods_are_gone():
    # scheduler.go: a preemptor is not admitted when it evicts; it is requeued at once and stays its queue's head,
    # so "mid", arriving while "low" terminates, cannot take the 2 free GPUs "high" counted on (it would loop)
    cfg = kueue_config(
        [l4_pool(3, min_nodes=3)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 6}]}], priorityClasses=CLASSES
    )
    jobs = [
        Job("busy", 0, "a", 2, run_s=9000, priority="high"),
        Job("low", 0, "a", 2, run_s=9000, priority="low"),
        Job("high", 100, "a", 2, nodes=2, run_s=1000, priority="high"),
        Job("mid", 105, "a", 2, run_s=100, priority="mid"),
    ]
    res = run(cfg, jobs)
    assert res.jobs["high"].start_s == 100 + EVICTION_S  # before: 100, admitted while low's pods still ran
    assert res.jobs["low"].preemptions == 1 and res.jobs["mid"].preemptions == 0
    # once high is done: its second node pulls the image from 130 s, then 1,000 s of work
    assert res.jobs["mid"].start_s == pytest.approx(100 + EVICTION_S + pods_run_after_s(2) + 1000)
