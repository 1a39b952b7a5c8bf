"""Backfill on Slurm's ``bf_resolution`` grid, worked out by hand from Slurm 26.05's backfill plugin
(src/plugins/sched/backfill/backfill.c at slurm-26-05-3-1): ``_set_slot_time`` (l.1906-1913) rounds a pending job's
planned start down to the grid and its end up, so at a coarse resolution a reservation holds its nodes before the job
could start there, and a short job that would fit the exact hole is kept out of it."""

from __future__ import annotations

from tests.support.whatif.stacks import cluster, slurm_config
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs

FIXED = SimOptions(nodes_up="max", spot_interruptions=False)
POOL = {
    "name": "h100",
    "machineType": "a3-highgpu-8g",
    "zones": ["us-central1-a"],
    "minNodes": 2,
    "maxNodes": 2,
    "multiNode": True,
}
CLASSES = [{"name": "high", "value": 1000}, {"name": "low", "value": 10}]
# R holds one of the two nodes until 1500 s; A needs both, so its will-run start is 1500 s; B (20 min) is tested by
# the first backfill pass at 30 s and would end at 1230 s.
JOBS = [
    Job("R", 0, "t", 8, run_s=1500, time_limit_s=1500, priority="low"),
    Job("A", 1, "t", 8, nodes=2, run_s=3600, time_limit_s=3600, priority="high"),
    Job("B", 2, "t", 8, run_s=1200, time_limit_s=1200, priority="low"),
]


def run_at_resolution(resolution_s: int):
    cfg = slurm_config(
        [POOL],
        [{"name": "t", "quotas": [{"pool": "h100", "gpus": 48}]}],
        priorityClasses=CLASSES,
        overcommit=True,  # no GrpTRES hold in play: only the nodes decide
        slurm={"backfill": {"resolutionSeconds": resolution_s}, "preemptType": "none"},
    )
    return simulate_jobs(cluster(cfg, FIXED), JOBS, 0, FIXED)


def test_a_reservation_starts_on_the_grid_below_its_will_run_start_and_keeps_a_short_job_out():
    # 600 s grid: A's slot is [floor(1500/600)*600, ceil(5100/600)*600) = [1200, 5400); B's [30, 1230) overlaps it.
    res = run_at_resolution(600)
    assert res.jobs["R"].starts == (0,)
    assert res.jobs["A"].starts == (1500.0,)  # the reservation is planning only: A still starts when R ends
    assert res.jobs["B"].starts == (5100.0,) and not res.jobs["B"].backfilled  # after A, not in the hole


def test_when_the_will_run_start_is_on_the_grid_the_short_job_is_backfilled():
    # 60 s grid: 1500 s is on it, A's slot starts at 1500, and B's [30, 1230) fits before it.
    res = run_at_resolution(60)
    assert res.jobs["A"].starts == (1500.0,)
    assert res.jobs["B"].starts == (30.0,) and res.jobs["B"].backfilled


def test_a_job_ending_exactly_as_a_reservation_starts_overlaps_it():
    # Slurm tests a candidate against a reservation with begin_time <= end_time (backfill.c l.3015-3017, l.3090):
    # inclusive. R holds a node to 1000 s, A (both nodes) plans [floor(1000/600)*600, ...) = [600, 4800). At the 30 s
    # pass B2 (570 s limit) would end at 600, the slot's start: it overlaps and stays out; B1 (540 s) ends at 570, fits.
    jobs = [
        Job("R", 0, "t", 8, run_s=1000, time_limit_s=1000, priority="low"),
        Job("A", 1, "t", 8, nodes=2, run_s=3600, time_limit_s=3600, priority="high"),
        Job("B2", 2, "t", 8, run_s=570, time_limit_s=570, priority="low"),
        Job("B1", 3, "t", 8, run_s=540, time_limit_s=540, priority="low"),
    ]
    cfg = slurm_config(
        [POOL],
        [{"name": "t", "quotas": [{"pool": "h100", "gpus": 48}]}],
        priorityClasses=CLASSES,
        overcommit=True,
        slurm={"backfill": {"resolutionSeconds": 600}, "preemptType": "none"},
    )
    res = simulate_jobs(cluster(cfg, FIXED), jobs, 0, FIXED)
    assert res.jobs["B1"].starts == (30.0,) and res.jobs["B1"].backfilled
    assert res.jobs["A"].starts == (1000.0,)
    assert res.jobs["B2"].starts == (4600.0,) and not res.jobs["B2"].backfilled
