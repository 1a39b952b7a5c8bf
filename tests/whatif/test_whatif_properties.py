"""Properties of the simulator (Hypothesis): more GPUs never lengthen a FIFO workload's mean wait; a job bigger than
every pool never starts and is named; allocated GPU-hours never exceed paid ones; the same seed gives the same output."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st

from tests.support.whatif.stacks import cluster, fifo_l4, kueue_config, l4_pool, h100_pool
from whatif.metrics import summarize
from whatif.model import Job, SimOptions, Workload
from whatif.run import simulate_jobs

FIXED = SimOptions(nodes_up="max", spot_interruptions=False)

jobs_st = st.lists(st.tuples(st.integers(0, 20_000), st.integers(60, 20_000)), min_size=1, max_size=30)


def whole_node_jobs(specs: list[tuple[int, int]]) -> list[Job]:
    return [Job(id=f"j{i}", submit_s=s, queue="team", gpus_per_node=2, run_s=r) for i, (s, r) in enumerate(specs)]


def mean_wait(nodes: int, jobs: list[Job]) -> float:
    res = simulate_jobs(cluster(fifo_l4(nodes), FIXED), jobs, 0, FIXED)
    waits = [res.jobs[j.id].start_s - j.submit_s for j in jobs]  # type: ignore[operator]
    return sum(waits) / len(waits)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs_st, st.integers(1, 3), st.integers(1, 3))
def test_more_gpus_never_lengthen_the_mean_fifo_wait(specs, nodes, more):
    jobs = whole_node_jobs(specs)
    assert mean_wait(nodes + more, jobs) <= mean_wait(nodes, jobs) + 1e-6


@settings(max_examples=15, deadline=None)
@given(jobs_st, st.integers(2, 6))
def test_a_job_bigger_than_every_pool_never_starts_and_is_named(specs, nodes):
    jobs = whole_node_jobs(specs) + [
        Job(id="too-big", submit_s=0, queue="team", gpus_per_node=2, nodes=nodes + 1, run_s=60)
    ]
    c = cluster(fifo_l4(nodes), FIXED)
    res = simulate_jobs(c, jobs, 0, FIXED)
    assert res.jobs["too-big"].start_s is None
    report = summarize(res, c, Workload("w", "jobs", jobs), 0)
    named = [n for n in report["neverStartable"] if n["job"] == "too-big"]
    assert named and "maxNodes" in named[0]["reason"]
    assert all(res.jobs[j.id].start_s is not None for j in jobs if j.id != "too-big")


AUTOSCALED = kueue_config(
    [h100_pool(2, min_nodes=0, multi=False), l4_pool(4, spot=True)],
    [
        {"name": "a", "quotas": [{"pool": "h100", "gpus": 8}, {"pool": "l4", "gpus": 4}]},
        {"name": "b", "quotas": [{"pool": "h100", "gpus": 8}, {"pool": "l4", "gpus": 4}]},
    ],
    cohort="c",
)

mixed_st = st.lists(
    st.tuples(st.integers(0, 40_000), st.integers(30, 30_000), st.sampled_from([1, 2, 8]), st.sampled_from(["a", "b"])),
    min_size=1,
    max_size=40,
)


def mixed_jobs(specs) -> list[Job]:
    return [Job(id=f"j{i}", submit_s=s, queue=q, gpus_per_node=g, run_s=r) for i, (s, r, g, q) in enumerate(specs)]


@settings(max_examples=25, deadline=None)
@given(mixed_st, st.integers(0, 10))
def test_allocated_gpu_hours_never_exceed_paid_ones(specs, seed):
    opts = SimOptions(spot_interruptions_per_node_month=300.0)  # many reclaims: evictions and replacements
    res = simulate_jobs(cluster(AUTOSCALED, opts), mixed_jobs(specs), seed, opts)
    for u in res.pools.values():
        assert u.allocated_gpu_s <= u.paid_node_s * u.gpus_per_node + 1e-6
    assert all(o.end_s is not None for o in res.jobs.values())


@settings(max_examples=10, deadline=None)
@given(mixed_st, st.integers(0, 10))
def test_same_seed_same_output(specs, seed):
    opts = SimOptions(spot_interruptions_per_node_month=100.0)
    jobs = mixed_jobs(specs)
    out = []
    for _ in range(2):
        c = cluster(AUTOSCALED, opts)
        out.append(json.dumps(summarize(simulate_jobs(c, jobs, seed, opts), c, Workload("w", "jobs", jobs), seed)))
    assert out[0] == out[1]
