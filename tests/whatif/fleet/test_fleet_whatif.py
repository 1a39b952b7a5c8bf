"""The fleet what-if: MultiKueue's dispatch over each worker's own Kueue, proven on small job lists whose outcome is
known by hand (AllAtOnce starts a job on whichever worker has room; Incremental with stepSize 1 asks the second
worker only after 5 minutes; the manager's quota holds jobs back), and on the shipped workload (each job on one
worker, the fleet totals the sum of the workers')."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml

from tests.support.spec.fleet_configs import encoded, raw
from tests.support.spec.edit import edits
from whatif.__main__ import main
from whatif.fleet.cluster import INCREMENTAL_WIDEN_S
from whatif.model import SimOptions
from whatif.run import run_whatif

ROOT = Path(__file__).resolve().parents[3]
OPTS = SimOptions(spot_interruptions=False)


def jobs_file(tmp_path: Path, jobs: list[dict]) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump({"kind": "jobs", "jobs": jobs}))
    return path


# research on gke: 24 H100 nominal, borrows 8 from product in cohort ml -> 32 (all four nodes); on eks 12 + 4 = 16
FILL_GKE = {"id": "fill", "submitS": 0, "queue": "research", "gpusPerNode": 8, "nodes": 4, "runS": 7200}
NEXT = {"id": "next", "submitS": 60, "queue": "research", "gpusPerNode": 8, "nodes": 1, "runS": 600}


def manager(changes: dict) -> dict:
    return encoded(edits(raw("fleet"), changes))


def test_all_at_once_runs_the_job_on_the_worker_with_room(tmp_path):
    run = run_whatif("fleet", jobs_file(tmp_path, [FILL_GKE, NEXT]), options=OPTS)
    jobs = run.result.jobs
    assert jobs["fill"].pool == "gke/h100" and jobs["fill"].start_s == 0
    assert jobs["next"].pool == "eks/p5" and jobs["next"].start_s == 60  # offered to both, eks admits at once
    assert [w["jobsRun"] for w in run.report["fleet"]["workers"]] == [1, 1]


def test_incremental_step_one_asks_the_second_worker_after_five_minutes(tmp_path):
    config = manager({("fleet", "dispatcher"): "Incremental", ("fleet", "incrementalStepSize"): 1})
    run = run_whatif(config, jobs_file(tmp_path, [FILL_GKE, NEXT]), options=OPTS, name="fleet-incremental")
    jobs = run.result.jobs
    assert jobs["next"].pool == "eks/p5" and jobs["next"].start_s == 60 + INCREMENTAL_WIDEN_S
    assert run.report["fleet"]["dispatcher"] == "Incremental" and run.report["fleet"]["stepSize"] == 1


def test_incremental_order_is_the_workers_order(tmp_path):
    config = manager(
        {
            ("fleet", "dispatcher"): "Incremental",
            ("fleet", "incrementalStepSize"): 1,
            ("fleet", "workers"): list(reversed(raw("fleet")["fleet"]["workers"])),
        }
    )
    run = run_whatif(config, jobs_file(tmp_path, [dict(NEXT, submitS=0)]), options=OPTS, name="eks-first")
    assert run.result.jobs["next"].pool == "eks/p5"  # eks is asked first now, and has room


def test_the_managers_quota_holds_jobs_back(tmp_path):
    quotas = [{"gpuModel": "H100_80GB", "gpus": 8}]
    # product has no H100 quota on the manager here: nothing to borrow in the manager's cohort
    config = manager(
        {("fleet", "queues", 0, "quotas"): quotas, ("fleet", "queues", 1, "quotas"): [{"gpuModel": "L4", "gpus": 8}]}
    )
    two = [dict(NEXT, id="a", submitS=0), dict(NEXT, id="b", submitS=0)]
    run = run_whatif(config, jobs_file(tmp_path, two), options=OPTS, name="small-quota")
    first = min(run.result.jobs.values(), key=lambda j: j.start_s)
    starts = sorted(j.start_s for j in run.result.jobs.values())
    # both workers have room; the manager dispatches the second when the first ends, 600 s after its pods run
    assert first.running_s is not None and starts == pytest.approx([0, first.running_s + 600])


@functools.cache
def shipped():
    return run_whatif("fleet", ROOT / "workloads/fleet.yaml", options=SimOptions())


def test_shipped_workload_every_job_on_one_worker_and_totals_add_up():
    run = shipped()
    workers = run.report["fleet"]["workers"]
    started = [o for o in run.result.jobs.values() if o.start_s is not None]
    assert started and all(o.pool.split("/")[0] in ("gke", "eks") for o in started)
    assert sum(w["jobsRun"] for w in workers) == len(started)
    assert all(w["jobsRun"] > 0 for w in workers)  # both clouds take work
    total = run.report["total"]
    assert total["costUsd"] == pytest.approx(sum(w["costUsd"] for w in workers), abs=0.02)
    assert total["paidGpuHours"] == pytest.approx(sum(w["paidGpuHours"] for w in workers), abs=0.02)
    for o in run.result.jobs.values():
        if o.end_s is not None:
            assert len(o.starts) == o.preemptions + 1, o  # one history per job across its copies
    used = {f["queue"]: f["usedGpuHours"] for f in run.report["fairShare"]}
    assert used["research"] > 0 and used["product"] > 0  # the workers' queues count for the fleet queue


def test_cli_vs_a_worker_by_name(capsys):
    assert (
        main(
            [
                "--stack",
                "fleet",
                "--workload",
                str(ROOT / "workloads/fleet.yaml"),
                "--vs",
                "gke",
                "--horizon-hours",
                "12",
                "--format",
                "markdown",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "**Fleet: MultiKueue AllAtOnce over gke, eks**" in out and "### Compared: `fleet` → `fleet-gke`" in out


def test_missing_worker_stack_is_exit_2(tmp_path, capsys):
    stack = tmp_path / "Pulumi.m.yaml"
    config = edits(raw("fleet"), {("fleet", "workers", 1, "stack"): "acme/gpu-cluster/nowhere"})
    stack.write_text(yaml.safe_dump({"config": {f"gpu-cluster:{k}": v for k, v in config.items()}}))
    assert main(["--stack-file", str(stack), "--workload", str(ROOT / "workloads/fleet.yaml")]) == 2
    assert "worker 'eks': no stack file Pulumi.nowhere.yaml" in capsys.readouterr().err


def test_a_tie_between_workers_is_drawn_by_the_seed_not_by_the_order_of_fleet_workers(tmp_path):
    # one 8-GPU job that both workers can admit at once: which Kueue answers first is a race in MultiKueue
    jobs = jobs_file(tmp_path, [dict(NEXT, id="tie", submitS=0)])
    swapped = manager({("fleet", "workers"): list(reversed(raw("fleet")["fleet"]["workers"]))})
    winners = {}
    for seed in range(8):
        listed = run_whatif("fleet", jobs, seed=seed, options=OPTS).result.jobs["tie"].pool
        reordered = run_whatif(swapped, jobs, seed=seed, options=OPTS, name="fleet-swapped").result.jobs["tie"].pool
        assert listed == reordered, seed  # the same draw whatever the list order
        winners[seed] = listed.split("/")[0]
    assert set(winners.values()) == {"gke", "eks"}, winners  # and not always the first-listed worker
