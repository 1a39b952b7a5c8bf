"""The fleet what-if's manager holds quota as the rendered manager ClusterQueues do (``render/fleet_manager.py``): one
flavor per GPU model with its own nominal quota, all queues in the cohort ``fleet`` with the borrowing and lending
limits the workers give them. Kueue's flavor assigner then gives a job what is available in its flavor: the queue's
unused guaranteed quota plus what the cohort can still lend, capped by ``borrowingLimit`` (v0.19.2,
``pkg/cache/scheduler`` resource nodes; ``whatif/kueue/cohort.py`` ports it). A job's flavor is its fleet runtime's
GPU model: the runtimes take whole nodes (8 H100, 2 L4, 1 L40S on the example), so a 1- or 2-GPU job never lands
on an H100 pool."""

from __future__ import annotations

from pathlib import Path

import yaml

from whatif.model import SimOptions
from whatif.run import run_whatif

OPTS = SimOptions(spot_interruptions=False)


def jobs_file(tmp_path: Path, jobs: list[dict]) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump({"kind": "jobs", "jobs": jobs}))
    return path


def job(job_id: str, submit: float, gpus: int, pool: str | None = None, queue: str = "research") -> dict:
    out = {"id": job_id, "submitS": submit, "queue": queue, "gpusPerNode": gpus, "nodes": 1, "runS": 3600}
    return out | ({"pool": pool} if pool else {})


def test_research_borrows_lent_h100s_and_l4_jobs_do_not_wait_behind_h100_jobs(tmp_path):
    # research: 36 H100 nominal + up to 12 borrowed from product (what product lends on the workers) = 48 = six
    # 8-GPU jobs, all at once (the workers hold 32 + 16); its 8 L4 GPUs are their own flavor, so four 2-GPU L4 jobs
    # start when the spot L4 nodes are up (~300 s). One number summed over models (46) held h6 for an hour and l4
    # behind it.
    jobs = [job(f"h{i}", i - 1, 8) for i in range(1, 7)] + [job(f"l{i}", 9 + i, 2, "gke/l4") for i in range(1, 5)]
    run = run_whatif("fleet", jobs_file(tmp_path, jobs), options=OPTS, name="fleet-flavors")
    res = run.result.jobs
    assert res["h6"].start_s == 5  # was 3600
    assert res["l4"].start_s is not None and res["l4"].start_s < 600  # was 3901
    assert {res[f"h{i}"].pool for i in range(1, 7)} == {"gke/h100", "eks/p5"}
    assert res["l4"].pool == "gke/l4"


def test_the_h100_quota_beyond_nominal_stops_at_the_borrowing_limit(tmp_path):
    # seven 8-GPU research jobs: 56 > 36 + 12; the seventh waits for one to end although the workers' queues would
    # report nothing else (product is idle)
    jobs = [job(f"h{i}", i - 1, 8) for i in range(1, 8)]
    run = run_whatif("fleet", jobs_file(tmp_path, jobs), options=OPTS, name="fleet-borrow-limit")
    starts = sorted(run.result.jobs[f"h{i}"].start_s for i in range(1, 8))
    assert starts[:6] == [0, 1, 2, 3, 4, 5] and starts[6] >= 3600


def test_one_and_two_gpu_jobs_run_where_their_fleet_runtime_puts_them_never_on_h100(tmp_path):
    jobs = [job("two", 0, 2), job("one", 1, 1, queue="product")]
    run = run_whatif("fleet", jobs_file(tmp_path, jobs), options=OPTS, name="fleet-small")
    assert run.result.jobs["two"].pool == "gke/l4"  # fleet-l4: 2 GPUs, the whole g2-standard-24
    assert run.result.jobs["one"].pool == "eks/l40s"  # fleet-l40s: 1 GPU, the whole g6e.xlarge


def test_a_job_no_fleet_runtime_asks_for_never_starts_and_says_why(tmp_path):
    run = run_whatif("fleet", jobs_file(tmp_path, [job("four", 0, 4)]), options=OPTS, name="fleet-four")
    four = run.result.jobs["four"]
    assert four.start_s is None
    assert four.never_startable == (
        "no fleet runtime asks for 4 GPUs per node (fleet runtimes take whole nodes: H100_80GB 8, L4 2, L40S 1)"
    )


def test_after_its_block_window_eks_still_admits_h100_copies_that_wait_out_the_pods_ready_timeout(tmp_path):
    # eks's p5 is a capacity block of 4,368 h (its nodes go 30 min before the end). After it, eks's Kueue still has
    # p5 quota and admits the copy; its pods wait for nodes until the 600 s pods-ready timeout evicts it, the manager
    # dispatches it again, and eks wins again, round after round. `late` starts on gke only at the end of the round in
    # which gke frees (t0 + 12 x 600), not when `fill` ends (t0 - 60 + 7200)
    end = 4368 * 3600
    jobs = [
        {"id": "fill", "submitS": end, "queue": "research", "gpusPerNode": 8, "nodes": 4, "runS": 7200},
        {"id": "late", "submitS": end + 60, "queue": "research", "gpusPerNode": 8, "nodes": 1, "runS": 600},
    ]
    run = run_whatif("fleet", jobs_file(tmp_path, jobs), options=OPTS, name="fleet-after-block")
    late = run.result.jobs["late"]
    assert late.pool == "gke/h100" and late.start_s == end + 60 + 12 * 600
