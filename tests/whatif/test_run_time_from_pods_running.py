"""A job's work starts once all its pods run, not at placement: it ends at pods running + its run time, and is
billed (its GPUs held) from placement. Hand cases: a cold L4 node (provisioning 300 s, a 15 GB full pull
~257.3 s, pod start 5 s) and a spot reclaim under Kueue's recovery timeout."""

from __future__ import annotations

import pytest

from tests.support.whatif.stacks import cluster, kueue_config, l4_pool
from whatif.core import INTERRUPT
from whatif.engine import Engine
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs

OPTS = SimOptions(nodes_up="min", spot_interruptions=False)


def one_queue(pool: dict) -> dict:
    return kueue_config([pool], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}])


def test_a_cold_start_job_ends_its_run_time_after_its_pods_run_not_after_placement():
    c = cluster(one_queue(l4_pool(1)), OPTS)
    res = simulate_jobs(c, [Job("j", 0, "a", 2, run_s=1000)], 0, OPTS)
    job = res.jobs["j"]
    assert job.start_s == 300  # placed once the node is up
    assert job.running_s is not None and job.running_s > job.start_s + 250  # the full pull
    assert job.end_s == pytest.approx(job.running_s + 1000)  # before: 1,300, before its pods had run long
    # held (and paid) from placement: run time plus the start path
    assert res.pools["l4"].allocated_gpu_s == pytest.approx(2 * (job.end_s - job.start_s))


def test_the_next_job_waits_for_the_first_ones_pods_and_run_time():
    c = cluster(one_queue(l4_pool(1)), OPTS)
    res = simulate_jobs(c, [Job("first", 0, "a", 2, run_s=1000), Job("second", 10, "a", 2, run_s=1000)], 0, OPTS)
    first, second = res.jobs["first"], res.jobs["second"]
    assert second.start_s == pytest.approx(first.running_s + 1000)
    # the node has the image now: only admission, scheduling and the pod start (~5 s)
    assert second.running_s - second.start_s == pytest.approx(5, abs=0.1)


def test_a_job_admitted_after_a_reclaim_never_ends_before_its_pods_run(monkeypatch):
    """Kueue keeps the reclaimed low-priority ``long`` admitted for the recovery timeout (600 s: until 1,600); its
    pods would run only at ~1,819.6 (a new node at 1,300, then a 30 GB pull), so it is evicted at 1,600 and ``next``
    is admitted on the new node, whose pull is already under way: ``next``'s pods run at ~1,819.6 and it ends 100 s
    later. Before, it "ended" at 1,700, before its pods ran."""
    node_on = Engine.node_on

    def first_node_reclaimed(self, pool, node, ready):
        node_on(self, pool, node, ready)
        if ready and node.index == 0 and self.now == 0:
            self.push(1000.0, INTERRUPT, (pool, node, node.epoch))

    monkeypatch.setattr(Engine, "node_on", first_node_reclaimed)
    pool = l4_pool(1, min_nodes=1, spot=True)
    pool["podStart"] = {"imageSizeGb": 30}
    cfg = kueue_config(
        [pool],
        [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}],
        priorityClasses=[{"name": "high", "value": 100}, {"name": "low", "value": 1}],
        preemption={"withinQueue": "Never"},
    )
    opts = SimOptions(nodes_up="max", spot_interruptions=False)
    jobs = [Job("long", 0, "a", 2, run_s=5000, priority="low"), Job("next", 500, "a", 2, run_s=100, priority="high")]
    res = simulate_jobs(cluster(cfg, opts), jobs, 0, opts)
    nxt, long = res.jobs["next"], res.jobs["long"]
    assert nxt.starts == (1600,)
    assert nxt.running_s == pytest.approx(1819.6, abs=0.1)
    assert nxt.end_s == pytest.approx(nxt.running_s + 100)
    assert long.starts[-1] == pytest.approx(nxt.end_s)  # long restarts once next is done
