"""A job's checkpoint interval bounds the work a preemption or spot reclaim throws away: the job resumes from its
last checkpoint. Hand-derived case (Kueue, one queue, 2 L4 GPUs): ``low`` (checkpoint every 600 s, 5,000 s of work)
runs from 0 (its pods run at ~262 s, after the cold pull); ``high`` preempts it at 1,000 and is placed at 1,030 (once
low's pods are gone, 30 s), its pods run ~5 s later on the node that has the image, and it ends 100 s after that; low
kept 600 s in its checkpoint (of ~738 s worked), loses 400 s x 2 GPUs of the 1,000 s held and resumes then for the
remaining 4,400 s, which start once its pods run again (~5 s)."""

from __future__ import annotations

import pytest

from tests.support.whatif.stacks import cluster, kueue_config, l4_pool
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs
from whatif.workload.load import load_workload

OPTS = SimOptions(nodes_up="max", spot_interruptions=False)
WARM = 1 / 43 + 1 / 333 + 5  # admission, scheduling one pod, the pod start (catalog/data/start-path.csv)
RESUME = 1030 + WARM + 100  # high's end
CLASSES = [{"name": "high", "value": 100}, {"name": "low", "value": 1}]


def config():
    return kueue_config(
        [l4_pool(1, min_nodes=1)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}], priorityClasses=CLASSES
    )


def run(checkpoint_s):
    cfg = config()
    jobs = [
        Job("low", 0, "a", 2, run_s=5000, priority="low", checkpoint_s=checkpoint_s),
        Job("high", 1000, "a", 2, run_s=100, priority="high"),
    ]
    return simulate_jobs(cluster(cfg, OPTS), jobs, 0, OPTS)


def test_a_preempted_job_resumes_from_its_last_checkpoint():
    res = run(600)
    assert res.jobs["low"].starts == pytest.approx((0, RESUME))
    assert res.jobs["low"].end_s == pytest.approx(RESUME + WARM + 5000 - 600)  # without the checkpoint: + 600
    assert res.pools["l4"].lost_gpu_s == pytest.approx(2 * 400)  # before: 2 x 1,000


def test_without_a_checkpoint_a_preempted_job_restarts_from_the_beginning():
    res = run(None)
    assert res.jobs["low"].end_s == pytest.approx(RESUME + WARM + 5000)
    assert res.pools["l4"].lost_gpu_s == pytest.approx(2 * 1000)


def test_the_workload_file_sets_the_checkpoint_interval(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(
        "kind: profile\nhours: 2\nqueues:\n  - queue: a\n    arrivals: {perHour: 4}\n"
        "    sizes: [{gpus: 2}]\n    duration: {medianMinutes: 30, sigma: 0.5}\n"
        "    checkpointMinutes: 15\n"
    )
    jobs = load_workload(path, cluster(config(), OPTS), 0).jobs
    assert jobs and all(j.checkpoint_s == 900 for j in jobs)
    path.write_text("kind: jobs\njobs:\n  - {id: j, submitS: 0, queue: a, gpusPerNode: 2, runS: 60, checkpointS: 0}\n")
    with pytest.raises(Exception, match="checkpointS"):
        load_workload(path, cluster(config(), OPTS), 0)
