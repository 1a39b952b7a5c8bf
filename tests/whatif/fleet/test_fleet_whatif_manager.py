"""The manager's ClusterQueue in the fleet what-if is Kueue's, on cases worked out by hand from Kueue v0.19.2:

- queue order (``pkg/queue``; ``Ordering.GetQueueOrderTimestamp``, ``pkg/workload``): higher priority first, then the
  queue-order timestamp, which for a Workload evicted by an admission check is its eviction time; MultiKueue sets
  its check to ``Retry`` when the copy is evicted on a worker (``MultiKueueRedoAdmissionOnEvictionInWorker``, locked on
  since 0.18), so that job queues again behind jobs created before the eviction;
- preemption at the manager (its ClusterQueues render ``withinClusterQueue: LowerPriority``;
  ``preemption/common/ordering.go`` and ``fillBackWorkloads``): a job that does not fit evicts lower-priority jobs of
  its queue, the lowest priority and the most recently admitted first, only as many as it needs; MultiKueue deletes
  the victim's copy on its worker (its work is lost) and the victim waits again at its creation time."""

from __future__ import annotations

import pytest

from pathlib import Path

import yaml

from tests.support.spec.fleet_configs import encoded, raw
from tests.support.spec.edit import edits
from whatif.cluster import KueueModel, QueueModel, QuotaModel
from whatif.kueue.cohort import Admitted, CohortView, Incoming, QueueView
from whatif.kueue.preempt import targets
from whatif.model import SimOptions
from whatif.run import run_whatif

OPTS = SimOptions(spot_interruptions=False)


def jobs_file(tmp_path: Path, jobs: list[dict]) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump({"kind": "jobs", "jobs": jobs}))
    return path


def h100(job_id: str, submit: float, run: float, priority: str | None = None, nodes: int = 1) -> dict:
    job = {"id": job_id, "submitS": submit, "queue": "research", "gpusPerNode": 8, "nodes": nodes, "runS": run}
    return job | ({"priority": priority} if priority else {})


def research_quota(gpus: int, changes: dict | None = None, product_h100: bool = False) -> dict:
    """research with ``gpus`` H100s on the manager; product without H100 quota unless ``product_h100`` (then it
    lends its 12 in the manager's cohort and research may dispatch past its own quota)."""
    quotas = [{"gpuModel": "H100_80GB", "gpus": gpus}]
    product = {} if product_h100 else {("fleet", "queues", 1, "quotas"): [{"gpuModel": "L4", "gpus": 8}]}
    return encoded(edits(raw("fleet"), {("fleet", "queues", 0, "quotas"): quotas, **product, **(changes or {})}))


def test_a_higher_priority_job_waiting_at_the_manager_preempts_a_lower_one_and_its_copy_stops(tmp_path):
    # research may hold 8 GPUs at the manager; `low` holds them. `high` (production 1000 > preemptible 10) does not
    # fit: Kueue preempts `low` on the manager at t=60, MultiKueue deletes its copy on the worker (1 preemption), `high`
    # is dispatched at once (both workers have room) and `low` waits for the quota `high` frees 600 s after its pods
    # run (a job's work starts once its pods run).
    jobs = [h100("low", 0, 3600, "preemptible"), h100("high", 60, 600, "production")]
    run = run_whatif(research_quota(8), jobs_file(tmp_path, jobs), options=OPTS, name="fleet-preempt")
    low, high = run.result.jobs["low"], run.result.jobs["high"]
    assert high.start_s == 60  # was 3600: the manager dispatched in submit order and never preempted
    assert high.end_s is not None and high.running_s is not None and high.end_s == pytest.approx(high.running_s + 600)
    assert low.starts == pytest.approx((0, high.end_s)) and low.preemptions == 1
    assert 0 < low.end_s - (high.end_s + 3600) < 300  # its pods' start, then 3,600 s


def test_the_manager_dispatches_by_priority_not_by_submit_order(tmp_path):
    # `first` (production) holds the 8 GPUs until 600 s after its pods run; `sweep` (preemptible, t=10) and `release` (production, t=20)
    # wait. Neither can preempt `first` (same or lower priority); then Kueue's queue order gives the quota to
    # `release` (higher priority) although `sweep` came first.
    jobs = [
        h100("first", 0, 600, "production"),
        h100("sweep", 10, 600, "preemptible"),
        h100("release", 20, 600, "production"),
    ]
    run = run_whatif(research_quota(8), jobs_file(tmp_path, jobs), options=OPTS, name="fleet-order")
    first, release = run.result.jobs["first"], run.result.jobs["release"]
    assert (
        first.end_s is not None and first.running_s is not None and first.end_s == pytest.approx(first.running_s + 600)
    )
    assert release.start_s == first.end_s
    assert run.result.jobs["sweep"].start_s == release.end_s


def test_a_job_evicted_on_a_worker_queues_again_behind_jobs_created_before_the_eviction(tmp_path):
    # Incremental, step 1, gke first. The manager's research queue: 32 H100 nominal (20 kept, 12 lent) and up to 12
    # borrowed from product in the manager's cohort. `fill` (32 H100: research's 24 + 8 borrowed from product on gke)
    # runs on gke; at the manager 12 are left to research, so `next` (t=30, 16 GPUs) waits there. `prod` (product,
    # t=60, 8) fits product's share at the manager and is offered to gke first, whose Kueue reclaims product's lent
    # GPUs by evicting `fill`; the manager evicts `fill` too (check Retry) and orders it by that eviction (about
    # t=60), after `next` (t=30). So `next` gets the quota at once (36 available to research) and starts on gke
    # beside `prod`; `fill` (32) no longer fits the 20 left. Ordered by creation (t=0), `fill` would take the quota
    # back first (it fits 36) and `next` would wait until `prod` ends.
    config = research_quota(
        32, {("fleet", "dispatcher"): "Incremental", ("fleet", "incrementalStepSize"): 1}, product_h100=True
    )
    jobs = [
        h100("fill", 0, 7200, nodes=4),
        h100("next", 30, 600, nodes=2),
        {"id": "prod", "submitS": 60, "queue": "product", "gpusPerNode": 8, "nodes": 1, "runS": 600},
    ]
    run = run_whatif(config, jobs_file(tmp_path, jobs), options=OPTS, name="fleet-evicted")
    fill, nxt, prod = (run.result.jobs[j] for j in ("fill", "next", "prod"))
    assert fill.preemptions == 1 and prod.pool == "gke/h100"
    # `fill`'s pods are gone when `prod` starts: `next` is dispatched and admitted in that same instant
    assert nxt.pool == "gke/h100" and nxt.start_s == prod.start_s < prod.end_s  # was: after `prod` and `fill` end
    # back to 32 free research H100 when both end (600 s after their pods run: 1 and 2 pods, a few ms apart)
    assert prod.end_s == pytest.approx(nxt.end_s, abs=0.1) and fill.starts[1] == max(prod.end_s, nxt.end_s)


def _manager_research(*held: Admitted) -> CohortView:
    """The manager's research ClusterQueue alone in its cohort, with its rendered preemption policies."""
    queue = QueueModel(
        "research", 1, {"H100_80GB": QuotaModel(32, None, None)}, within_queue="LowerPriority", reclaim="Any"
    )
    view = CohortView(KueueModel("fleet", False, None), {"research": QueueView(queue)})
    for w in held:
        view.queues["research"].add(w)
    return view


def test_manager_preemption_takes_lowest_priority_then_newest_and_gives_back_the_unneeded():
    def held(n: int, value: int, gpus: int, at: float) -> Admitted:
        return Admitted(n, "research", "H100_80GB", gpus, value, at, at, n)

    def victims_for(priority: int, need: int) -> list[int]:
        view = _manager_research(held(1, 10, 8, 0.0), held(2, 10, 8, 50.0), held(3, 100, 16, 10.0))
        return [
            w.key for w in targets(view, Incoming("research", priority, 100.0, {"H100_80GB": need}), "H100_80GB", need)
        ]

    assert victims_for(1000, 8) == [2]  # same priority: the most recently admitted first
    assert victims_for(1000, 16) == [2, 1]
    # 2 (8) and 1 (8) are not enough for 24; 3 (16) is taken third; fillBack then gives 1 back (2 + 3 make room)
    assert victims_for(1000, 24) == [2, 3]
    assert victims_for(100, 24) == []  # 3 is not lower than 100: nothing to preempt


def test_all_at_once_a_production_job_preempts_on_every_worker_it_is_offered_to(tmp_path):
    # Both workers are full of preemptible research jobs (gke 4 x 8 H100 with 8 borrowed, eks 2 x 8); the manager has
    # room (56). AllAtOnce creates the production job's copy on both; each worker's Kueue preempts one of its own
    # victims for it (withinClusterQueue: LowerPriority there), independently. The first copy admitted wins, the other
    # is deleted: 2 preemptions, 2 x 8 GPUs x the victims' run until the eviction. The loser's victim is evicted on its
    # worker, so the manager requeues it and dispatches it again at once (its worker has room again).
    jobs = [h100(f"low{i}", 0, 7200, "preemptible") for i in range(6)] + [h100("high", 100, 600, "production")]
    for seed in (0, 1):
        run = run_whatif(research_quota(56), jobs_file(tmp_path, jobs), options=OPTS, name="fleet-aao", seed=seed)
        out = run.result.jobs
        victims_ = sorted((j for j in out if j != "high" and out[j].preemptions), key=lambda j: out[j].starts[1])
        assert len(victims_) == 2 and run.report["preemptions"]["count"] == 2, seed
        loser, winner = (out[j] for j in victims_)
        assert {loser.pool.split("/")[0], winner.pool.split("/")[0]} == {"gke", "eks"}  # one on each worker
        high = out["high"]
        assert high.pool.split("/")[0] == winner.pool.split("/")[0] and loser.starts[1] == high.start_s
        assert winner.starts[1] == high.end_s  # the winner's victim waits for the production job to end
