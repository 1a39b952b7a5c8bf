"""A fleet worker the manager loses, as MultiKueue handles it in Kueue v0.19.2, on a case worked out by hand.

``pkg/controller/admissionchecks/multikueue/workload.go`` at v0.19.2: ``remoteClientsForAC`` (lines 293-306) lists a
worker whose connection is not up as unavailable, so no copy is created there; step 6a of ``reconcileGroup``
(lines 545-559) keeps a job whose admitting worker is unavailable admitted (check Ready, so its manager quota) for
``workerLostTimeout`` measured from when the loss was first observed (``admittingWorkerLostSince``, 284-291), then sets
the check to ``Retry`` ("Admitting remote lost"): the job is evicted at the manager and queued again by that eviction's
time. Its copy on the lost worker is out of the manager's reach and runs on; at reconnection the job, holding quota
again, converges on the copy admitted first (step 6b, 571-581), the old one. ``workerLostTimeout`` defaults to
15 minutes (``apis/config/v1beta2/configuration_types.go`` 345-350). Reconnection cases: ``test_fleet_whatif_reconnect``.

The shipped fleet, one 8-GPU H100 job p1 (product, t=0, 7,200 s) on an idle fleet: it runs on the worker ``w`` of the
plain run. ``w`` is lost from t=1,000 for 3,600 s: p1 keeps its manager quota until 1,000 + 900 = 1,900, is evicted
then and dispatched at 1,900 to the other worker only (``w`` is out until 4,600), while its copy on ``w`` runs on.
At 4,600 the rerun is deleted (8 GPUs x 2,700 s = 6.0 GPU-h thrown away) and p1 ends on ``w`` 7,200 s after its
first pods ran (``w``'s nodes are up from 0 and pre-pull the image: ``RUNS_AT``, ~90.8 s on eks). Lost for 600 s only
(< 900), the worker comes back in time and p1 ends at that same time where it started, nothing lost."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from preview.engine import PROJECT_ROOT
from tests.support.whatif.fleet_start import RUNS_AT
from tests.support.whatif.stacks import WARM
from whatif.fleet.cluster import go_seconds
from whatif.model import SimOptions
from whatif.report.markdown import render_markdown
from whatif.report.text import render_text
from whatif.run import run_whatif
from whatif.workload.load import WorkloadError

OPTS = SimOptions(spot_interruptions=False)


def h100(job_id: str, submit: float, run: float) -> dict:
    return {"id": job_id, "submitS": submit, "queue": "product", "gpusPerNode": 8, "nodes": 1, "runS": run}


def run_with(tmp_path: Path, jobs: list[dict], outages: list[dict], stack: str = "fleet"):
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump({"kind": "jobs", "jobs": jobs, "outages": outages}))
    return run_whatif(stack, path, seed=0, options=OPTS, name="fleet-worker-loss")


def first_worker(tmp_path: Path) -> str:
    pool = run_with(tmp_path, [h100("p1", 0, 7200)], []).result.jobs["p1"].pool
    assert pool is not None
    return pool.split("/", 1)[0]


def test_a_job_on_a_lost_worker_reruns_elsewhere_at_the_timeout_and_the_old_copy_wins_at_reconnection(tmp_path):
    w = first_worker(tmp_path)
    run = run_with(tmp_path, [h100("p1", 0, 7200)], [{"worker": w, "atS": 1000, "forS": 3600}])
    p1 = run.result.jobs["p1"]
    assert p1.starts == (0.0, 1900.0)  # evicted at 1,000 + workerLostTimeout (900), dispatched again at once
    assert p1.pool.startswith(f"{w}/")  # the copy admitted first, on w, is the one that ends the job
    assert p1.end_s == pytest.approx(RUNS_AT[w] + 7200)
    assert run.report["preemptions"] == {"count": 1, "lostGpuHours": 6.0, "podsReadyEvictions": 0}  # 8 x 2,700 s
    loss = run.report["fleet"]["workerLoss"]
    assert loss["jobsEvicted"] == 1 and loss["workerLostTimeoutS"] == 900.0
    line = f"Workers lost: {w} from 1000 s for 3600 s; workerLostTimeout 900 s; 1 job(s) evicted"
    assert line in render_markdown(run.report)
    assert line in " ".join(render_text(run.report, color=False).split())


def test_a_worker_back_before_the_timeout_loses_nothing(tmp_path):
    w = first_worker(tmp_path)
    run = run_with(tmp_path, [h100("p1", 0, 7200)], [{"worker": w, "atS": 1000, "forS": 600}])
    p1 = run.result.jobs["p1"]
    assert p1.starts == (0.0,) and p1.end_s == pytest.approx(RUNS_AT[w] + 7200) and p1.pool.startswith(f"{w}/")
    assert run.report["preemptions"]["count"] == 0 and run.report["fleet"]["workerLoss"]["jobsEvicted"] == 0


def test_a_job_submitted_while_a_worker_is_out_goes_only_to_the_reachable_worker(tmp_path):
    w = first_worker(tmp_path)
    other = {"gke": "eks", "eks": "gke"}[w]
    # the lost worker is idle and would win half the races: while it is out only the other worker gets a copy;
    # the other is busy with p0 until 3,000 s after p0's pods run, so p1 waits for it rather than running on the
    # lost worker
    jobs = [h100("p0", 0, 3000), h100("p1", 100, 600)]
    base = run_with(tmp_path, jobs, [])
    holder = base.result.jobs["p0"].pool.split("/", 1)[0]
    run = run_with(tmp_path, jobs, [{"worker": other if holder == w else w, "atS": 50, "forS": 10000}])
    p0, p1 = run.result.jobs["p0"], run.result.jobs["p1"]
    lost = other if holder == w else w
    assert not p1.pool.startswith(f"{lost}/")
    # it waited for the reachable worker, though the lost one was idle
    assert p1.start_s == p0.end_s == pytest.approx(RUNS_AT[holder] + 3000)


def test_the_timeout_is_the_one_the_manager_renders():
    from render.fleet_manager import multikueue_config
    from whatif.stack import load_stack_spec

    spec = load_stack_spec("fleet")
    assert spec.fleet is not None
    assert go_seconds(multikueue_config(spec.fleet)["workerLostTimeout"]) == 900.0
    assert go_seconds("1h2m3s") == 3723.0


def test_an_outage_naming_no_worker_or_overlapping_another_is_refused_with_every_problem(tmp_path):
    with pytest.raises(WorkloadError) as err:
        run_with(
            tmp_path,
            [h100("p1", 0, 600)],
            [
                {"worker": "aks", "atS": 0, "forS": 60},
                {"worker": "gke", "atS": 100, "forS": 600},
                {"worker": "gke", "atS": 300, "forS": 60},
            ],
        )
    text = str(err.value)
    assert "2 errors" in text
    assert "outages[0].worker: no worker 'aks' in this fleet" in text and "gke, eks" in text
    assert "outages[2].atS: worker 'gke' is already out at 300 s" in text and "700 or later" in text


def test_an_outage_shape_error_names_the_setting(tmp_path):
    with pytest.raises(WorkloadError) as err:
        run_with(tmp_path, [h100("p1", 0, 600)], [{"worker": "gke", "atS": -1, "forS": 0}])
    text = str(err.value)
    assert "outages[0].atS" in text and "outages[0].forS" in text


def test_outages_on_a_stack_that_is_not_a_fleet_manager_are_refused(tmp_path):
    path = tmp_path / "jobs.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "kind": "jobs",
                "jobs": [{"id": "a", "submitS": 0, "queue": "research", "gpusPerNode": 8, "runS": 60}],
                "outages": [{"worker": "gke", "atS": 0, "forS": 60}],
            }
        )
    )
    with pytest.raises(WorkloadError) as err:
        run_whatif("fleet-gke", path, seed=0, options=OPTS)
    assert "is not a fleet manager" in str(err.value) and "fleet: {role: manager}" in str(err.value)


def test_an_incremental_nominee_that_is_lost_stalls_the_job_until_the_next_round(tmp_path):
    # v0.19.2 pkg/controller/workloaddispatcher/incrementaldispatcher.go getNextNominatedWorkers (169-192) nominates
    # from the MultiKueueConfig's clusters, reachable or not (config order, a beta gate on by default); workload.go
    # creates copies only on reachable nominees, so a round whose only nominee is lost offers the job nowhere until
    # the next round, 5 min later
    for name in ("fleet-eks", "fleet-gke"):
        shutil.copy(PROJECT_ROOT / f"Pulumi.{name}.yaml", tmp_path / f"Pulumi.{name}.yaml")
    doc = yaml.safe_load((PROJECT_ROOT / "Pulumi.fleet.yaml").read_text())
    doc["config"]["gpu-cluster:fleet"].update({"dispatcher": "Incremental", "incrementalStepSize": 1})
    first = doc["config"]["gpu-cluster:fleet"]["workers"][0]["name"]
    (tmp_path / "Pulumi.fleet.yaml").write_text(yaml.safe_dump(doc))
    path = tmp_path / "jobs.yaml"
    for outages, start, worker in [([], 10.0, first), ([{"worker": first, "atS": 0, "forS": 86400}], 310.0, None)]:
        path.write_text(yaml.safe_dump({"kind": "jobs", "jobs": [h100("p1", 10, 600)], "outages": outages}))
        p1 = run_whatif(tmp_path / "Pulumi.fleet.yaml", path, seed=0, options=OPTS).result.jobs["p1"]
        assert p1.start_s == start, outages
        assert p1.pool.startswith(f"{worker}/") if worker else not p1.pool.startswith(f"{first}/")


def test_a_copy_that_finished_on_the_lost_worker_before_the_timeout_is_evicted_and_runs_again(tmp_path):
    """x ends on the lost worker 1,500 s after its pods run (~1,591 on eks), unseen, and keeps its quota until the
    1,900 s timeout, when Kueue evicts it all the same (step 6a) and queues it behind y (queued since 10), which
    takes the freed quota. At the 4,600 reconnect x holds no quota, so its finished copy is deleted (step 2,
    workload.go 380-394): 8 GPUs from 0 to its end count for nothing, and x runs again when g1's quota is free, on
    g1's warm node; every job of the case ends."""
    w = first_worker(tmp_path)
    jobs = [h100("x", 0, 1500), h100("g1", 1, 7200), h100("g2", 2, 7200), h100("y", 10, 7200)]
    run = run_with(tmp_path, jobs, [{"worker": w, "atS": 1000, "forS": 3600}])
    x, g1 = run.result.jobs["x"], run.result.jobs["g1"]
    other = {"gke": "eks", "eks": "gke"}[w]
    assert g1.end_s == pytest.approx(RUNS_AT[other] + 7200)  # g1 (t=1) runs on the other worker
    assert x.starts == pytest.approx((0.0, g1.end_s)) and x.end_s == pytest.approx(g1.end_s + WARM + 1500)
    lost = round(8 * (RUNS_AT[w] + 1500) / 3600, 2)
    assert run.report["preemptions"] == {"count": 1, "lostGpuHours": lost, "podsReadyEvictions": 0}
    assert all(j.end_s is not None for j in run.result.jobs.values()), "every job of the case ends"
    assert run.report["fleet"]["workerLoss"]["jobsEvicted"] == 1
