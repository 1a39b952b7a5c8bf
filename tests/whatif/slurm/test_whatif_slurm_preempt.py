"""Slurm preemption and accounts as rendered: preempt/partition_prio (a job in a higher PriorityTier partition
preempts one in a lower partition on the same nodes), Slurm's 121 s hold on a requeued job, the victim order among
equals, and no GrpTRES caps without accounting (no slurmdbd, no associations)."""

from __future__ import annotations

from tests.support.whatif.stacks import cluster, h100_pool, slurm_config
from whatif.run import simulate_jobs
from whatif.model import Job, SimOptions

FIXED = SimOptions(nodes_up="max", spot_interruptions=False)
QUEUES = [{"name": "a", "quotas": [{"pool": "h100", "gpus": 16}]}]
REQUEUE_DELAY_S = 121  # cred_expire 120 s + 1, measured on real Slurm 26.05 (docs/contributing/whatif-validation.md)
CLASSES = [{"name": "high", "value": 100}, {"name": "low", "value": 1}]


def run(cfg, jobs):
    return simulate_jobs(cluster(cfg, FIXED), jobs, 0, FIXED)


def test_partition_prio_a_job_of_the_pools_own_partition_preempts_one_that_borrowed_it_through_all():
    cfg = slurm_config([h100_pool(2)], QUEUES, cohort="all", slurm={"preemptType": "partition_prio"})
    c = cluster(cfg, FIXED)
    assert c.slurm is not None and c.slurm.preempt_type == "partition_prio"
    assert {p.name: p.tier for p in c.slurm.partitions} == {"h100": 2, "all": 1}
    jobs = [
        Job("borrower", 0, "a", 8, nodes=2, run_s=1000),  # the default partition `all` (tier 1)
        Job("owner", 100, "a", 8, nodes=1, run_s=50, pool="h100"),
    ]  # the pool's own partition (tier 2)
    res = run(cfg, jobs)
    assert res.jobs["owner"].start_s == 103  # the main scheduler preempts after batch_sched_delay (see below)
    assert res.jobs["borrower"].preemptions == 1
    assert res.jobs["borrower"].starts == (0, 103 + REQUEUE_DELAY_S)  # held 121 s, then both nodes are free again


def test_partition_prio_does_not_preempt_within_a_tier():
    cfg = slurm_config([h100_pool(2)], QUEUES, cohort="all", slurm={"preemptType": "partition_prio"})
    jobs = [
        Job("first", 0, "a", 8, nodes=2, run_s=1000, pool="h100"),
        Job("second", 100, "a", 8, nodes=1, run_s=50, pool="h100"),
    ]
    res = run(cfg, jobs)
    assert res.jobs["first"].preemptions == 0 and res.jobs["second"].start_s == 1000


def test_a_requeued_job_is_held_121_s_before_it_may_start_again():
    cfg = slurm_config([h100_pool(2)], QUEUES, cohort="all", priorityClasses=CLASSES)
    jobs = [
        Job("low", 0, "a", 8, nodes=2, run_s=1000, priority="low"),
        Job("high", 100, "a", 8, nodes=2, run_s=30, priority="high"),
    ]
    res = run(cfg, jobs)
    assert res.jobs["high"].start_s == 103 and res.jobs["low"].preemptions == 1
    assert res.jobs["low"].starts == (0, 224)  # not 133, when high ended: cred_expire 120 s + 1 after the requeue


def test_among_equal_victims_the_first_submitted_is_preempted():
    cfg = slurm_config([h100_pool(2)], QUEUES, cohort="all", priorityClasses=CLASSES)
    jobs = [
        Job("L1", 0, "a", 8, run_s=1000, priority="low"),
        Job("L2", 10, "a", 8, run_s=1000, priority="low"),
        Job("H", 20, "a", 8, run_s=100, priority="high"),
    ]
    res = run(cfg, jobs)
    assert (res.jobs["L1"].preemptions, res.jobs["L2"].preemptions) == (1, 0)  # real Slurm 26.05 took L1 too


def test_without_accounting_a_quota_is_no_cap():
    queues = [
        {"name": "a", "quotas": [{"pool": "h100", "gpus": 8}]},
        {"name": "b", "quotas": [{"pool": "h100", "gpus": 8}]},
    ]
    no_acct = {"accounting": False, "priorityWeights": {"fairShare": 0, "age": 0}}
    jobs = [Job("a1", 0, "a", 8, run_s=1000), Job("a2", 1, "a", 8, run_s=1000)]
    res = run(slurm_config([h100_pool(2)], queues, slurm=no_acct), jobs)
    assert res.jobs["a2"].start_s == 1  # no slurmdbd, no association, no GrpTRES
    capped = run(slurm_config([h100_pool(2)], queues, slurm={"accounting": True}), jobs)
    assert capped.jobs["a2"].start_s == 1000  # the same quota with accounting: GrpTRES gres/gpu=8


def test_the_main_scheduler_preempts_for_a_new_job_only_after_batch_sched_delay():
    """Real Slurm 26.05 requeued the victim 2.2-4.6 s after the preemptor's submit, never at once: only the main
    scheduler preempts, and it defers a new batch job by batch_sched_delay (3 s by default)."""
    cfg = slurm_config([h100_pool(2)], QUEUES, cohort="all", priorityClasses=CLASSES)
    jobs = [
        Job("low", 0, "a", 8, nodes=2, run_s=1000, priority="low"),
        Job("high", 100, "a", 8, nodes=2, run_s=30, priority="high"),
    ]
    res = run(cfg, jobs)
    assert res.jobs["high"].start_s == 103 and res.jobs["low"].starts == (0, 103 + REQUEUE_DELAY_S)
