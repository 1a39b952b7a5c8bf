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

from pathlib import Path

import yaml

from tests.fleet.fleet_configs import encoded, raw
from tests.support.spec.edit import edits
from whatif.fleet.manager import victims
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


def research_quota(gpus: int, changes: dict | None = None) -> dict:
    quotas = [{"gpuModel": "H100_80GB", "gpus": gpus}]
    return encoded(edits(raw("fleet"), {("fleet", "queues", 0, "quotas"): quotas, **(changes or {})}))


def test_a_higher_priority_job_waiting_at_the_manager_preempts_a_lower_one_and_its_copy_stops(tmp_path):
    # research may hold 8 GPUs at the manager; `low` holds them. `high` (production 1000 > preemptible 10) does not
    # fit: Kueue preempts `low` on the manager at t=60, MultiKueue deletes its copy on the worker (1 preemption), `high`
    # is dispatched at once (both workers have room) and `low` waits for the quota `high` frees at 60 + 600.
    jobs = [h100("low", 0, 3600, "preemptible"), h100("high", 60, 600, "production")]
    run = run_whatif(research_quota(8), jobs_file(tmp_path, jobs), options=OPTS, name="fleet-preempt")
    low, high = run.result.jobs["low"], run.result.jobs["high"]
    assert high.start_s == 60  # was 3600: the manager dispatched in submit order and never preempted
    assert low.starts == (0, 660) and low.preemptions == 1
    assert low.end_s == 660 + 3600


def test_the_manager_dispatches_by_priority_not_by_submit_order(tmp_path):
    # `first` (production) holds the 8 GPUs until 600; `sweep` (preemptible, t=10) and `release` (production, t=20)
    # wait. Neither can preempt `first` (same or lower priority); at 600 Kueue's queue order gives the quota to
    # `release` (higher priority) although `sweep` came first.
    jobs = [h100("first", 0, 600, "production"), h100("sweep", 10, 600, "preemptible"),
            h100("release", 20, 600, "production")]
    run = run_whatif(research_quota(8), jobs_file(tmp_path, jobs), options=OPTS, name="fleet-order")
    assert run.result.jobs["release"].start_s == 600
    assert run.result.jobs["sweep"].start_s == 1200


def test_a_job_evicted_on_a_worker_queues_again_behind_jobs_created_before_the_eviction(tmp_path):
    # Incremental, step 1, gke first. `fill` (32 H100: research's 24 + 8 borrowed from product on gke) runs on gke
    # and holds research's whole manager quota (32). `next` (t=30, 8 GPUs) waits at the manager. `prod` (product,
    # t=60) is offered to gke first, whose Kueue reclaims product's lent GPUs by evicting `fill`; the manager evicts
    # `fill` too (check Retry) and orders it by that eviction (about t=60), after `next` (t=30). So `next` gets
    # the quota at once and starts on gke (research keeps 24 H100 there); `fill` (32) no longer fits the 24 left.
    # Ordered by creation (t=0), `fill` would take the quota back first and `next` would wait until `prod` ends.
    config = research_quota(32, {("fleet", "dispatcher"): "Incremental", ("fleet", "incrementalStepSize"): 1})
    jobs = [h100("fill", 0, 7200, nodes=4), h100("next", 30, 600),
            {"id": "prod", "submitS": 60, "queue": "product", "gpusPerNode": 8, "nodes": 1, "runS": 600}]
    run = run_whatif(config, jobs_file(tmp_path, jobs), options=OPTS, name="fleet-evicted")
    fill, nxt, prod = (run.result.jobs[j] for j in ("fill", "next", "prod"))
    assert fill.preemptions == 1 and prod.pool == "gke/h100"
    # `fill`'s pods are gone when `prod` starts: `next` is dispatched and admitted in that same instant
    assert nxt.pool == "gke/h100" and nxt.start_s == prod.start_s < prod.end_s  # was: after `prod` and `fill` end
    assert fill.starts[1] == prod.end_s  # back to 32 free research H100 on gke when `prod` ends


class W:
    def __init__(self, n: int, value: int, gpus: float, reserved_at: float):
        self.n, self.value, self.gpus, self.reserved_at = n, value, gpus, reserved_at


def test_manager_preemption_takes_lowest_priority_then_newest_and_gives_back_the_unneeded():
    a, b, c = W(1, 10, 8, 0.0), W(2, 10, 8, 50.0), W(3, 100, 16, 10.0)
    assert victims(1000, 8, 0, [a, b, c]) == [b]  # same priority: the most recently admitted first
    assert victims(1000, 16, 0, [a, b, c]) == [b, a]
    # b (8) and a (8) are not enough for 24; c (16) is taken third; fillBack then tries, in reverse and without the
    # last one taken, a (given back: b + c still make room) and b (needed)
    assert victims(1000, 24, 0, [a, b, c]) == [b, c]
    assert victims(100, 24, 0, [a, b, c]) is None  # c is not lower than 100: nothing to preempt
    assert victims(10, 8, 8, [a]) == []  # it fits: no victim


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
