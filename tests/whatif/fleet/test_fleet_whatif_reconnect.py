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

import pytest

import shutil
from pathlib import Path

import yaml

from tests.support.whatif.fleet_start import EKS_H100_RUNS_AT
from tests.support.whatif.stacks import COLD, WARM
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
    assert s1.end_s == pytest.approx(s1.running_s + 600) and worker(s1) == "eks"  # its work from its pods running
    assert run.report["unfinished"] == 0


def test_copies_that_finish_on_a_lost_worker_free_manager_quota_at_reconnection(tmp_path):
    # s1-s8 fill the manager's 8 L40S GPUs and run on eks from 300 (1,200 s once their pods run); eks is lost 1,250-1,850, so the manager sees
    # them finish only at 1,850 (step 3): s9, waiting at the manager since 10, is dispatched then and runs at once
    jobs = [job(f"s{i}", 0, 1200, gpus=1) for i in range(1, 9)] + [job("s9", 10, 600, gpus=1)]
    run = run_with(tmp_path, jobs, [{"worker": "eks", "atS": 1250, "forS": 600}])
    assert all(run.result.jobs[f"s{i}"].end_s < 1850 for i in range(1, 9))  # 1,200 s after their pods run
    s9 = run.result.jobs["s9"]
    assert s9.starts == (1850.0,) and s9.end_s == pytest.approx(s9.running_s + 600)
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
    assert jobs["p3"].starts == (0.0,) and jobs["p3"].end_s == pytest.approx(jobs["p3"].running_s + 1200)
    assert jobs["p4"].starts == (1600.0,) and worker(jobs["p4"]) == "gke"
    assert jobs["p4"].end_s == pytest.approx(jobs["p4"].running_s + 600)
    assert run.report["preemptions"]["count"] == 0 and run.report["fleet"]["workerLoss"]["jobsEvicted"] == 0


def test_past_the_timeout_a_finished_copy_without_quota_is_deleted_and_its_job_runs_again(tmp_path):
    # gke lost 1,000-4,600. At 1,900 (6a) p2 (running) and p3 (finished at ~1,225, unseen) are both evicted and
    # queued again at 1,900. p4 (queued since 10) and one of them get the 16 GPUs of quota back. In Kueue the two
    # evictions race; the model orders equal timestamps by submission, so p2 gets it. eks (p1 and its own quota)
    # admits neither copy. At the 4,600 reconnect: p2 converges on its gke copy admitted at 0 (6b) and ends at
    # 7,200 s after its pods run; p3 holds no quota, so its finished copy is deleted (step 2): its 8 GPUs x ~1,225 s
    # (its pods' start and 1,200 s of work) = 2.72 GPU-h count for nothing and it runs again when p4's quota is
    # free; p4 gets a gke copy at the reconnect and runs at once
    run = run_with(tmp_path, FOUR, [{"worker": "gke", "atS": 1000, "forS": 3600}])
    jobs = run.result.jobs
    p2, p3, p4 = jobs["p2"], jobs["p3"], jobs["p4"]
    assert p2.starts == (0.0,) and p2.end_s == pytest.approx(p2.running_s + 7200) and worker(p2) == "gke"
    assert p4.starts == (4600.0,) and p4.end_s == pytest.approx(p4.running_s + 600) and worker(p4) == "gke"
    assert p3.starts == pytest.approx((0.0, p4.end_s)) and 0 < p3.end_s - (p4.end_s + 1200) < 300
    assert run.report["preemptions"] == {"count": 1, "lostGpuHours": 2.72, "podsReadyEvictions": 0}
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
    assert x.starts == (0.0, 1900.0) and x.end_s == pytest.approx(x.running_s + 2000) and worker(x) == w
    assert run.report["preemptions"] == {"count": 1, "lostGpuHours": 1.33, "podsReadyEvictions": 0}
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
    stack = incremental_fleet(tmp_path)
    first = yaml.safe_load(stack.read_text())["config"]["gpu-cluster:fleet"]["workers"][0]["name"]
    path = tmp_path / "jobs.yaml"
    path.write_text(
        yaml.safe_dump(
            {"kind": "jobs", "jobs": [job("p1", 10, 600)], "outages": [{"worker": first, "atS": 0, "forS": 100}]}
        )
    )
    p1 = run_whatif(stack, path, seed=0, options=OPTS).result.jobs["p1"]
    assert p1.starts == (100.0,) and worker(p1) == first


EIGHT_DONE_BY_1763 = [job(f"q{i}", 0, 1200, gpus=1) for i in range(1, 9)] + [job("w9", 100, 600, gpus=1)]
"""q1-q8 fill the manager's 8 L40S GPUs, placed on eks at 300 (new node), pods running at 300 + COLD (~562), done at
~1,762, before the 1,900 timeout; w9 waits at the manager since 100."""
EIGHT_END = 300 + COLD + 1200


def test_an_outage_of_exactly_the_timeout_evicts_before_the_worker_is_back(tmp_path):
    # eks lost 1,000-1,900 with workerLostTimeout 900: at 1,900 Kueue's remaining wait is 900 - 900 = 0, not > 0,
    # so the check goes to Retry (553-559); the reconnection waits for a retry back-off, so it comes after. All 8
    # are evicted at 1,900 (finished at ~1,762, unseen) and queued behind w9; w9 and q1-q7 get the 8 GPUs back
    # (equal eviction times: submission order), q1-q7 finish at the reconnect (step 3) and q8, without quota, has
    # its finished copy deleted (step 2): 1 GPU x ~1,462 s (placement at 300 to its end) = 0.41 GPU-h lost, and it
    # runs again from 1,900 on the eks node that has the image (WARM), 1,200 s of work.
    # One second longer gives the same outcome one second later; one second shorter loses nothing
    outcomes = {}
    for span in (899, 900, 901):
        run = run_with(tmp_path, EIGHT_DONE_BY_1763, [{"worker": "eks", "atS": 1000, "forS": span}])
        jobs = run.result.jobs
        for i in range(1, 8):
            assert jobs[f"q{i}"].starts == (300.0,) and jobs[f"q{i}"].end_s == pytest.approx(EIGHT_END)
        assert run.report["unfinished"] == 0
        outcomes[span] = (jobs["q8"].starts, jobs["q8"].end_s, jobs["w9"].starts, run.report["preemptions"])
        outcomes[span] += (run.report["fleet"]["workerLoss"]["jobsEvicted"],)
    lost = {"count": 1, "lostGpuHours": 0.41, "podsReadyEvictions": 0}
    assert outcomes[900] == ((300.0, 1900.0), pytest.approx(1900 + WARM + 1200), (1900.0,), lost, 8)
    assert outcomes[901] == ((300.0, 1901.0), pytest.approx(1901 + WARM + 1200), (1901.0,), lost, 8)
    nothing = {"count": 0, "lostGpuHours": 0.0, "podsReadyEvictions": 0}
    assert outcomes[899] == ((300.0,), pytest.approx(EIGHT_END), (1899.0,), nothing, 0)


def test_a_job_evicted_while_its_only_capable_worker_is_lost_converges_on_its_old_copy(tmp_path):
    # s (L40S, eks only) runs on eks from 300; eks lost 1,000-4,600. At 1,900 s is evicted (6a) and re-reserved at
    # the manager, but gke, the only reachable worker, has no L40S pool: no copy. At 4,600 s holds quota and its
    # eks copy runs: it converges on it (6b) and ends 7,200 s after its pods run (300 + COLD), nothing lost. s2
    # (t=2,000) holds quota with no copy until the reconnect creates one on eks (913-950), where a new L40S node is
    # up 300 s later and pulls the image (COLD) before its 600 s of work
    jobs = [job("s", 0, 7200, gpus=1), job("s2", 2000, 600, gpus=1)]
    run = run_with(tmp_path, jobs, [{"worker": "eks", "atS": 1000, "forS": 3600}])
    s, s2 = run.result.jobs["s"], run.result.jobs["s2"]
    assert s.starts == (300.0,) and s.end_s == pytest.approx(300 + COLD + 7200) and worker(s) == "eks"
    assert s2.starts == (4900.0,) and s2.end_s == pytest.approx(4900 + COLD + 600) and worker(s2) == "eks"
    assert run.report["preemptions"] == {"count": 0, "lostGpuHours": 0.0, "podsReadyEvictions": 0}
    assert run.report["fleet"]["workerLoss"]["jobsEvicted"] == 1


def test_a_running_copy_of_a_job_without_quota_at_reconnection_is_deleted_and_runs_again(tmp_path):
    # q1-q8 (L40S, 5,000 s) are placed on eks at 300 (pods running at 300 + COLD); w9 waits since 100; eks lost
    # 1,000-3,000. At 1,900 all 8 are evicted and queued behind w9; w9 and q1-q7 get the 8 GPUs back (equal
    # eviction times: Kueue races, the model takes submission order). At 3,000 q1-q7 converge on their running
    # copies (6b); q8 holds no quota, so step 2 deletes its running copy: 1 GPU x 2,700 s (placement to deletion) =
    # 0.75 GPU-h lost. w9 is placed on eks at 3,000 (node has the image: WARM) and ends 600 s later; q8,
    # re-reserved on w9's quota then, runs its 5,000 s again on the same warm node
    jobs = [job(f"q{i}", 0, 5000, gpus=1) for i in range(1, 9)] + [job("w9", 100, 600, gpus=1)]
    run = run_with(tmp_path, jobs, [{"worker": "eks", "atS": 1000, "forS": 2000}])
    got = run.result.jobs
    for i in range(1, 8):
        assert got[f"q{i}"].starts == (300.0,) and got[f"q{i}"].end_s == pytest.approx(300 + COLD + 5000)
    w9_end = 3000 + WARM + 600
    assert got["w9"].starts == (3000.0,) and got["w9"].end_s == pytest.approx(w9_end) and worker(got["w9"]) == "eks"
    assert got["q8"].starts == pytest.approx((300.0, w9_end)) and got["q8"].end_s == pytest.approx(w9_end + WARM + 5000)
    assert run.report["preemptions"] == {"count": 1, "lostGpuHours": 0.75, "podsReadyEvictions": 0}
    assert run.report["fleet"]["workerLoss"]["jobsEvicted"] == 8
    assert run.report["unfinished"] == 0


def incremental_fleet(tmp_path: Path, workers: list[str] | None = None) -> Path:
    """The shipped fleet with the Incremental dispatcher, one worker a round (``workers``: in that order)."""
    from preview.engine import PROJECT_ROOT

    for name in ("fleet-eks", "fleet-gke"):
        shutil.copy(PROJECT_ROOT / f"Pulumi.{name}.yaml", tmp_path / f"Pulumi.{name}.yaml")
    doc = yaml.safe_load((PROJECT_ROOT / "Pulumi.fleet.yaml").read_text())
    fleet = doc["config"]["gpu-cluster:fleet"]
    fleet.update({"dispatcher": "Incremental", "incrementalStepSize": 1})
    if workers is not None:
        fleet["workers"] = sorted(fleet["workers"], key=lambda w: workers.index(w["name"]))
    (tmp_path / "Pulumi.fleet.yaml").write_text(yaml.safe_dump(doc))
    return tmp_path / "Pulumi.fleet.yaml"


def test_an_incremental_job_evicted_from_its_lost_first_worker_is_renominated_from_the_first_round(tmp_path):
    # Incremental, eks then gke. p1 (H100) runs on eks from 0; eks lost 1,000-4,600. At 1,900 p1 is evicted, which
    # resets its nominations (evict.go 205-217): round 1 nominates eks again, lost, so no copy; round 2 at 2,200
    # nominates gke, where p1 reruns. At 4,600 p1 converges on its eks copy, admitted first (6b): the gke rerun is
    # deleted, 8 GPUs x 2,400 s = 5.33 GPU-h lost, and p1 ends on eks 7,200 s after its first pods ran (eks's
    # H100 nodes are up from 0 and pre-pull the image: EKS_H100_RUNS_AT)
    stack = incremental_fleet(tmp_path, ["eks", "gke"])
    path = tmp_path / "jobs.yaml"
    path.write_text(
        yaml.safe_dump(
            {"kind": "jobs", "jobs": [job("p1", 0, 7200)], "outages": [{"worker": "eks", "atS": 1000, "forS": 3600}]}
        )
    )
    run = run_whatif(stack, path, seed=0, options=OPTS)
    assert run.report["fleet"]["dispatcher"] == "Incremental" and run.report["fleet"]["stepSize"] == 1
    p1 = run.result.jobs["p1"]
    assert p1.starts == (0.0, 2200.0) and p1.end_s == pytest.approx(EKS_H100_RUNS_AT + 7200) and worker(p1) == "eks"
    assert run.report["preemptions"] == {"count": 1, "lostGpuHours": 5.33, "podsReadyEvictions": 0}
    assert run.report["fleet"]["workerLoss"]["jobsEvicted"] == 1
