"""The Kueue model on small cases: borrowing within a cohort, reclaim by preemption, StrictFIFO vs BestEffortFIFO,
gang requeue after waitForPodsReady, autoscaling with the provisioning delay and billing while up."""

from __future__ import annotations

import pytest

from tests.support.whatif.stacks import COLD, cluster, kueue_config, l4_pool, pods_run_after_s
from whatif.kueue.sched import EVICTION_S
from whatif.run import simulate_jobs
from whatif.model import Job, SimOptions

FIXED = SimOptions(nodes_up="max", spot_interruptions=False)


def two_teams(**scheduling):
    queues = [
        {"name": "a", "quotas": [{"pool": "l4", "gpus": 4}]},
        {"name": "b", "quotas": [{"pool": "l4", "gpus": 4}]},
    ]
    return kueue_config([l4_pool(4, min_nodes=4)], queues, **scheduling)


def run(cfg, jobs, options=FIXED):
    return simulate_jobs(cluster(cfg, options), jobs, 0, options)


def test_a_queue_borrows_idle_quota_in_its_cohort_and_is_reclaimed():
    jobs = [Job(f"a{i}", 0, "a", 2, run_s=5000) for i in range(4)] + [Job("b1", 100, "b", 2, run_s=100)]
    res = run(two_teams(cohort="c"), jobs)
    assert all(res.jobs[f"a{i}"].start_s == 0 for i in range(4))  # two of them borrow b's quota
    assert res.jobs["b1"].start_s == 100 + EVICTION_S  # b reclaims: a borrower is preempted, its pods go
    assert sum(res.jobs[f"a{i}"].preemptions for i in range(4)) == 1


def test_without_a_cohort_nothing_is_borrowed():
    jobs = [Job(f"a{i}", 0, "a", 2, run_s=5000) for i in range(3)]
    res = run(two_teams(), jobs)
    assert res.jobs["a2"].start_s == pytest.approx(COLD + 5000)  # a0's pods run after the pull, then 5,000 s


def test_strict_fifo_head_blocks_and_best_effort_lets_smaller_jobs_pass():
    jobs = [
        Job("run", 0, "a", 2, run_s=1000),
        Job("head", 1, "a", 2, nodes=2, run_s=10),
        Job("small", 2, "a", 2, run_s=10),
    ]
    strict = run(two_teams(queueingStrategy="StrictFIFO"), jobs)
    best = run(two_teams(queueingStrategy="BestEffortFIFO"), jobs)
    # run ends 1,000 s after its pods (cold pull); head's second node pulls too, then head runs 10 s
    assert strict.jobs["small"].start_s == pytest.approx(COLD + 1000 + pods_run_after_s(2) + 10)
    assert best.jobs["small"].start_s == 2


def test_autoscaled_pool_waits_for_provisioning_and_bills_from_the_request():
    cfg = kueue_config([l4_pool(2)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 4}]}])
    opts = SimOptions(spot_interruptions=False)
    res = run(cfg, [Job("j", 0, "a", 2, run_s=3600)], opts)
    assert res.jobs["j"].start_s == 300  # catalog provisioning delay (catalog/data/provisioning.csv)
    # the pull and pod start, the run, then until the autoscaler removes the empty node
    assert res.pools["l4"].paid_node_s == pytest.approx(300 + COLD + 3600 + 600)


def test_a_gang_that_cannot_get_its_nodes_is_requeued_after_the_timeout():
    cfg = kueue_config(
        [l4_pool(2, min_nodes=2)],
        [{"name": "a", "quotas": [{"pool": "l4", "gpus": 8}]}],
        overcommit=True,
        gang={"timeoutSeconds": 600},
    )  # above hold's cold pull (~260 s)
    jobs = [Job("hold", 0, "a", 2, run_s=1000), Job("gang", 1, "a", 2, nodes=2, run_s=10)]
    res = run(cfg, jobs)
    assert res.jobs["gang"].start_s is not None and res.jobs["gang"].start_s >= 1000
