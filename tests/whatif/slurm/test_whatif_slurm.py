"""The Slurm model on small cases whose answer is known: priority order, backfill into a hole without delaying the
top job, QOS preemption with REQUEUE, GrpTRES caps, Fair Tree ranking, block placement."""

from __future__ import annotations

from tests.support.whatif.stacks import cluster, h100_pool, slurm_config
from whatif.run import simulate_jobs
from whatif.model import Job, SimOptions
from whatif.slurm.sched import fair_tree

FIXED = SimOptions(nodes_up="max", spot_interruptions=False)
QUEUES = [
    {"name": "a", "quotas": [{"pool": "h100", "gpus": 32}]},
    {"name": "b", "quotas": [{"pool": "h100", "gpus": 32}]},
]
CLASSES = [{"name": "high", "value": 100}, {"name": "low", "value": 1}]


def run(cfg, jobs, options=FIXED):
    return simulate_jobs(cluster(cfg, options), jobs, 0, options)


def test_backfill_starts_a_short_job_in_the_hole_and_the_big_job_keeps_its_start():
    cfg = slurm_config([h100_pool(4)], QUEUES, overcommit=True)
    jobs = [
        Job("long", 0, "a", 8, nodes=3, run_s=3600, time_limit_s=3600),
        Job("big", 10, "b", 8, nodes=4, run_s=600, time_limit_s=600),
        Job("short", 20, "a", 8, nodes=1, run_s=1000, time_limit_s=1200),
        Job("too-long", 30, "b", 8, nodes=1, run_s=5000, time_limit_s=5000),
    ]
    res = run(cfg, jobs)
    assert res.jobs["long"].start_s == 0
    assert res.jobs["short"].start_s == 30 and res.jobs["short"].backfilled  # first backfill pass after submit
    assert res.jobs["big"].start_s == 3600  # not delayed by the backfilled job
    assert res.jobs["too-long"].start_s == 3600 + 600  # would have delayed big: waits


def test_without_backfill_the_short_job_waits_behind_the_big_one():
    cfg = slurm_config([h100_pool(4)], QUEUES, overcommit=True)
    jobs = [
        Job("long", 0, "a", 8, nodes=3, run_s=3600),
        Job("big", 10, "b", 8, nodes=4, run_s=600),
        Job("short", 20, "a", 8, nodes=1, run_s=1000),
    ]
    res = run(cfg, jobs, SimOptions(nodes_up="max", spot_interruptions=False, backfill=False))
    assert res.jobs["short"].start_s == 4200


def test_qos_preemption_requeues_the_low_job_and_it_restarts_from_scratch():
    cfg = slurm_config([h100_pool(2)], QUEUES, priorityClasses=CLASSES, overcommit=True)
    jobs = [
        Job("low", 0, "a", 8, nodes=2, run_s=1000, priority="low"),
        Job("high", 100, "b", 8, nodes=2, run_s=500, priority="high"),
    ]
    res = run(cfg, jobs)
    assert res.jobs["high"].start_s == 103  # the main scheduler preempts after batch_sched_delay (3 s)
    assert res.jobs["low"].preemptions == 1 and res.jobs["low"].starts == (0, 603)
    assert res.jobs["low"].end_s == 1603
    assert res.pools["h100"].lost_gpu_s == 16 * 103


def test_grptres_caps_an_account_and_lets_the_other_pass():
    """A job over its account's GrpTRES waits (AssocGrpGRES) without blocking lower-priority jobs."""
    queues = [
        {"name": "a", "quotas": [{"pool": "h100", "gpus": 8}]},
        {"name": "b", "quotas": [{"pool": "h100", "gpus": 24}]},
    ]
    cfg = slurm_config([h100_pool(4)], queues)
    jobs = [Job("a1", 0, "a", 8, run_s=1000), Job("a2", 1, "a", 8, run_s=1000), Job("b1", 2, "b", 8, run_s=1000)]
    res = run(cfg, jobs)
    assert res.jobs["a2"].start_s == 1000  # GrpTRES gres/gpu:h100=8
    assert res.jobs["b1"].start_s == 2


def test_a_multi_node_job_stays_inside_one_block():
    cfg = slurm_config([h100_pool(8)], QUEUES, slurm={"blockSize": 4})
    jobs = [Job("one", 0, "a", 8, nodes=1, run_s=1000), Job("gang", 1, "b", 8, nodes=4, run_s=100)]
    res = run(cfg, jobs)
    assert res.jobs["one"].nodes == ("h100-0",)
    assert res.jobs["gang"].nodes == ("h100-4", "h100-5", "h100-6", "h100-7")


def test_fair_tree_ranks_the_account_below_its_share_first():
    assert fair_tree({"a": 3, "b": 1}, {"a": 10.0, "b": 10.0}) == {"a": 1.0, "b": 0.5}
    assert fair_tree({"a": 1, "b": 1}, {"a": 0.0, "b": 5.0}) == {"a": 1.0, "b": 0.5}
    assert fair_tree({"a": 1, "b": 1}, {}) == {"a": 1.0, "b": 1.0}


def test_backfill_reserves_a_gang_at_its_joint_start_after_a_reservation_on_a_node_free_now():
    """Node 0 has 4 GPUs free now but is reserved (8 GPUs) for 100-500; node 1 is busy until 300; 2 and 3 until
    5000. A 2-node 4-GPU job of 50 s fits node 0 now and node 1 from 300, but together only from 500: Slurm reserves
    it there. Checking only each node's own earliest start (0 and 300) finds no joint start before 5000."""
    from whatif.nodes import UP, PoolState
    from whatif.slurm.backfill import earliest

    c = cluster(slurm_config([h100_pool(4, multi=False)], QUEUES, overcommit=True), FIXED)
    pool = PoolState(c.pools["h100"])
    for n in pool.nodes:
        n.state = UP
    n0, n1, n2, n3 = pool.nodes
    busy = {
        id(n0): [(0.0, 100.0, 4), (100.0, 500.0, 8)],
        id(n1): [(0.0, 300.0, 8)],
        id(n2): [(0.0, 5000.0, 8)],
        id(n3): [(0.0, 5000.0, 8)],
    }

    class Gang:
        job = Job("gang", 0, "a", 4, nodes=2, run_s=50, time_limit_s=50)

    found = earliest(pool, Gang, busy, 0.0, 86400.0, 1.0)  # type: ignore[arg-type]
    assert found is not None
    assert (found[0], [n.name for n in found[1]]) == (500.0, ["h100-0", "h100-1"])
