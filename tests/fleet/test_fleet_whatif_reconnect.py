"""A lost fleet worker that comes back, as MultiKueue reconciles it in Kueue v0.19.2, on cases worked by hand.

``pkg/controller/admissionchecks/multikueue/workload.go`` at v0.19.2 (``git show v0.19.2:...`` in the kueue mirror):

- ``remoteClientsForAC`` (293-306): a lost worker is not in the group, so the manager neither creates nor deletes
  anything there while it is out; what it holds stays (queued, running or finished copies);
- ``reconcileGroup`` step 2 (380-394): a job finished at the manager or holding no manager quota has every copy
  deleted, the returned worker's included, finished or running;
- step 3 (396-440): a finished copy finishes a job holding quota;
- step 6a (545-559): the admitting worker lost for ``workerLostTimeout`` (900 s here) -> Retry: the job is evicted
  and queued again by that time, even if its copy has in fact finished;
- step 6b (571-581) with ``bestMatchByCondition`` (140-155): the copy admitted first wins, the newer are deleted;
- ``nominateAndSynchronizeWorkers`` (913-950): under AllAtOnce each reconcile nominates every connected worker and
  creates the missing copies, so a reconnect offers waiting jobs to the returned worker.

The shipped fleet, seed 0, no spot interruptions: the manager's ``product`` H100 quota is 24 GPUs; the eks L40S pool
scales from zero (a node is up 300 s after it is asked for); the reconnect back-off (at most 320 s) is not modelled.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from whatif.model import SimOptions
from whatif.run import run_whatif

OPTS = SimOptions(spot_interruptions=False)


def job(job_id: str, submit: float, run: float, gpus: int = 8) -> dict:
    return {"id": job_id, "submitS": submit, "queue": "product", "gpusPerNode": gpus, "nodes": 1, "runS": run}


def run_with(tmp_path: Path, jobs: list[dict], outages: list[dict]):
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump({"kind": "jobs", "jobs": jobs, "outages": outages}))
    return run_whatif("fleet", path, seed=0, options=OPTS, name="fleet-reconnect")


def worker(outcome) -> str:
    return outcome.pool.split("/", 1)[0]


def test_a_job_only_the_lost_worker_can_run_is_offered_to_it_on_reconnection(tmp_path):
    # an L40S job (only eks has L40S) submitted at 1,100 while eks is lost 1,000-1,600: admitted at the manager at
    # once, no copy anywhere (no reachable worker has L40S); the reconnect creates its copy on eks (913-950), whose
    # node is up 300 s later, as for the same job submitted at 1,600 with no outage
    run = run_with(tmp_path, [job("s1", 1100, 600, gpus=1)], [{"worker": "eks", "atS": 1000, "forS": 600}])
    alone = run_with(tmp_path, [job("s1", 1600, 600, gpus=1)], [])
    s1 = run.result.jobs["s1"]
    assert s1.starts == alone.result.jobs["s1"].starts == (1900.0,)
    assert s1.end_s == 2500.0 and worker(s1) == "eks"
    assert run.report["unfinished"] == 0


def test_copies_that_finish_on_a_lost_worker_free_manager_quota_at_reconnection(tmp_path):
    # s1-s8 fill the manager's 8 L40S GPUs and run on eks 300-1,500; eks is lost 1,250-1,850, so the manager sees
    # them finish only at 1,850 (step 3): s9, waiting at the manager since 10, is dispatched then and runs at once
    jobs = [job(f"s{i}", 0, 1200, gpus=1) for i in range(1, 9)] + [job("s9", 10, 600, gpus=1)]
    run = run_with(tmp_path, jobs, [{"worker": "eks", "atS": 1250, "forS": 600}])
    assert all(run.result.jobs[f"s{i}"].end_s == 1500.0 for i in range(1, 9))
    s9 = run.result.jobs["s9"]
    assert s9.starts == (1850.0,) and s9.end_s == 2450.0
    assert run.report["unfinished"] == 0


FOUR = [job("p1", 0, 7200), job("p2", 0, 7200), job("p3", 0, 1200), job("p4", 10, 600)]
"""p1 runs on eks, p2 and p3 on gke from 0; p4 waits at the manager (24 GPUs of quota in use)."""


def test_a_job_finished_on_a_worker_back_before_the_timeout_holds_its_quota_until_then(tmp_path):
    # gke lost 1,000-1,600 (< 900 s): p3 ends on gke at 1,200 but keeps its manager quota until the reconnect at
    # 1,600 (step 3); only then is p4 dispatched, to both workers, and gke (8 GPUs free since 1,200) runs it at once.
    # Freeing the quota at 1,200 sent p4 to eks alone, behind p1, to run 7,200-7,800
    run = run_with(tmp_path, FOUR, [{"worker": "gke", "atS": 1000, "forS": 600}])
    jobs = run.result.jobs
    assert worker(jobs["p1"]) == "eks" and worker(jobs["p2"]) == worker(jobs["p3"]) == "gke"
    assert jobs["p3"].starts == (0.0,) and jobs["p3"].end_s == 1200.0
    assert jobs["p4"].starts == (1600.0,) and jobs["p4"].end_s == 2200.0 and worker(jobs["p4"]) == "gke"
    assert run.report["preemptions"]["count"] == 0 and run.report["fleet"]["workerLoss"]["jobsEvicted"] == 0


def test_past_the_timeout_a_finished_copy_without_quota_is_deleted_and_its_job_runs_again(tmp_path):
    # gke lost 1,000-4,600. At 1,900 (6a) p2 (running) and p3 (finished at 1,200, unseen) are both evicted and
    # queued again at 1,900. p4 (queued since 10) and one of them get the 16 GPUs of quota back. In Kueue the two
    # evictions race; the model orders equal timestamps by submission, so p2 gets it. eks (p1 and its own quota)
    # admits neither copy. At the 4,600 reconnect: p2 converges on its gke copy admitted at 0 (6b) and ends at
    # 7,200; p3 holds no quota, so its finished copy is deleted (step 2): its 8 GPUs x 1,200 s = 2.67 GPU-h count
    # for nothing and it runs again when p4's quota is free; p4 gets a gke copy at the reconnect and runs at once
    run = run_with(tmp_path, FOUR, [{"worker": "gke", "atS": 1000, "forS": 3600}])
    jobs = run.result.jobs
    assert jobs["p2"].starts == (0.0,) and jobs["p2"].end_s == 7200.0 and worker(jobs["p2"]) == "gke"
    assert jobs["p4"].starts == (4600.0,) and jobs["p4"].end_s == 5200.0 and worker(jobs["p4"]) == "gke"
    assert jobs["p3"].starts == (0.0, 5200.0) and jobs["p3"].end_s == 6400.0
    assert run.report["preemptions"] == {"count": 1, "lostGpuHours": 2.67}
    assert run.report["fleet"]["workerLoss"]["jobsEvicted"] == 2
    assert run.report["unfinished"] == 0


def test_a_copy_finishing_on_a_lost_worker_after_the_timeout_finishes_the_rerun_job_at_reconnection(tmp_path):
    # x (2,000 s) runs on w; w lost 1,000-2,500. At 1,900 (6a) x is evicted and rerun on the other worker; its copy
    # on w runs on and ends at 2,000, unseen. At 2,500 x holds quota again and that copy is finished: step 3
    # finishes x, and the rerun (1,900-2,500) is deleted, 8 GPUs x 600 s = 1.33 GPU-h thrown away
    base = run_with(tmp_path, [job("x", 0, 2000)], [])
    w = worker(base.result.jobs["x"])
    run = run_with(tmp_path, [job("x", 0, 2000)], [{"worker": w, "atS": 1000, "forS": 1500}])
    x = run.result.jobs["x"]
    assert x.starts == (0.0, 1900.0) and x.end_s == 2000.0 and worker(x) == w
    assert run.report["preemptions"] == {"count": 1, "lostGpuHours": 1.33}
    assert run.report["unfinished"] == 0


def test_every_fleet_job_left_at_the_end_is_named_with_where_it_waits(tmp_path):
    # eks lost from 1,000 past the 3,000 s horizon: s1 (L40S, eks only) holds manager quota with no copy anywhere;
    # p1, on eks, is evicted at 1,900 and waits at the manager behind p4 while its copy stays on eks
    jobs = [job("s1", 1100, 600, gpus=1), *(job(f"p{i}", 0, 7200) for i in (1, 2, 3)), job("p4", 10, 600)]
    path = tmp_path / "jobs.yaml"
    path.write_text(
        yaml.safe_dump({"kind": "jobs", "jobs": jobs, "outages": [{"worker": "eks", "atS": 1000, "forS": 20000}]})
    )
    opts = SimOptions(spot_interruptions=False, horizon_s=3000)
    run = run_whatif("fleet", path, seed=0, options=opts, name="fleet-left")
    assert run.report["unfinished"] == 5
    [line] = [w for w in run.report["warnings"] if "fleet job(s) not finished" in w]
    assert line.startswith("5 fleet job(s) not finished at the end: ")
    assert "s1 holds manager quota but no reachable worker has a L40S pool (offered to eks on reconnection)" in line
    assert "p1 waits at the manager for H100_80GB quota in queue product; its copy stays on lost worker eks" in line
    assert "p2 runs on gke" in line and "p4 holds manager quota, queued on gke" in line


def test_an_incremental_nominee_back_from_a_loss_gets_its_copy_at_reconnection(tmp_path):
    # Incremental, one worker a round: p1 (t=10) is nominated to the first worker, lost 0-100, so no copy is made
    # (remoteClientsForAC). Its reconnect at 100 reconciles p1, whose nominees include that worker: the copy is
    # created then (913-950) and runs at once, before the next round (310) would offer p1 to the second worker
    from preview.engine import PROJECT_ROOT

    for name in ("fleet-eks", "fleet-gke"):
        shutil.copy(PROJECT_ROOT / f"Pulumi.{name}.yaml", tmp_path / f"Pulumi.{name}.yaml")
    doc = yaml.safe_load((PROJECT_ROOT / "Pulumi.fleet.yaml").read_text())
    doc["config"]["gpu-cluster:fleet"].update({"dispatcher": "Incremental", "incrementalStepSize": 1})
    first = doc["config"]["gpu-cluster:fleet"]["workers"][0]["name"]
    (tmp_path / "Pulumi.fleet.yaml").write_text(yaml.safe_dump(doc))
    path = tmp_path / "jobs.yaml"
    path.write_text(
        yaml.safe_dump(
            {"kind": "jobs", "jobs": [job("p1", 10, 600)], "outages": [{"worker": first, "atS": 0, "forS": 100}]}
        )
    )
    p1 = run_whatif(tmp_path / "Pulumi.fleet.yaml", path, seed=0, options=OPTS).result.jobs["p1"]
    assert p1.starts == (100.0,) and worker(p1) == first
