"""``python -m whatif --stack <fleet manager>``: the workers' stacks loaded from their files, the workload dispatched by
MultiKueue over their own Kueue models (``fleet_sched.py``), and the report: the usual totals over every worker's
pools, plus per worker and fleet utilization, waits and $ per used GPU-hour."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from stacks.spec.stack import StackSpec
from stacks.validate.issues import SpecError, SpecIssue, path_of
from whatif.cluster import ClusterModel
from whatif.engine import Engine
from whatif.fleet.cluster import composite, fleet_model, worker_facts
from whatif.fleet.sched import FleetScheduler
from whatif.metrics import total_row, wait_stats
from whatif.model import SimOptions, SimResult, Workload


def fleet_workers_checked(spec: StackSpec, root: Path, load: Callable[[Path], StackSpec]) -> dict[str, StackSpec]:
    """Each worker's spec from ``Pulumi.<stack>.yaml``; a missing file, or a stack that is not a worker, is exit 2."""
    assert spec.fleet is not None
    out, issues = {}, []
    for i, w in enumerate(spec.fleet.workers):
        name = w.stack.rsplit("/", 1)[-1]
        path = root / f"Pulumi.{name}.yaml"
        at = path_of("fleet", "workers", i, "stack")
        if not path.exists():
            issues.append(
                SpecIssue(
                    at,
                    f"worker '{w.name}': no stack file {path.name}",
                    w.stack,
                    fix=f"add {path.name} to the repository, or correct the stack name",
                )
            )
            continue
        worker = load(path)
        if worker.fleet is None or worker.fleet.role.value != "worker":
            issues.append(
                SpecIssue(
                    at,
                    f"worker '{w.name}': stack {name} is not a fleet worker",
                    w.stack,
                    allowed="a stack with fleet: {role: worker}",
                    fix=f"set fleet.role: worker in {path.name}",
                )
            )
            continue
        out[name] = worker
    if issues:
        raise SpecError(issues)
    return out


def simulate_fleet(
    spec: StackSpec,
    label: str,
    root: Path,
    load: Callable[[Path], StackSpec],
    cluster_of: Callable[[StackSpec, str], ClusterModel],
    load_workload: Callable[..., Workload],
    workload: Path,
    seed: int,
    opts: SimOptions,
) -> tuple[ClusterModel, Workload, SimResult, dict[str, Any]]:
    specs = fleet_workers_checked(spec, root, load)
    fleet = fleet_model(spec, lambda stack: cluster_of(specs[stack], stack), lambda stack: worker_facts(specs[stack]))
    cluster = composite(label, fleet)
    wl = load_workload(workload, cluster, seed)
    check_outages(wl.outages, fleet.workers, workload)
    eng = Engine(cluster, wl.jobs, seed, opts, FleetScheduler.factory(fleet, seed, wl.outages))
    result = eng.run()
    per_queue: dict[str, float] = {}
    for q, s in result.queue_gpu_s.items():  # the copies ran in <worker>/<queue>: count them for the fleet queue
        per_queue[q.split("/", 1)[-1]] = per_queue.get(q.split("/", 1)[-1], 0.0) + s
    result.queue_gpu_s = per_queue
    section = fleet_section(fleet.dispatcher, fleet.step_size, fleet.workers, fleet.stacks, result, wl)
    if wl.outages:
        sched = eng.scheduler
        assert isinstance(sched, FleetScheduler)
        section["workerLoss"] = {
            "workerLostTimeoutS": fleet.worker_lost_timeout_s,
            "outages": [{"worker": w, "atS": a, "forS": f} for w, a, f in wl.outages],
            "jobsEvicted": sched.lost_evictions,
        }
    return cluster, wl, result, section


def check_outages(outages: list[tuple[str, float, float]], workers: tuple[str, ...], path: Path) -> None:
    """Every outage names a worker of this fleet, and one worker's outages do not overlap; all problems at once."""
    from whatif.workload.load import WorkloadError  # lazy, as the caller passes load_workload in

    issues: list[SpecIssue] = []
    last_end: dict[str, float] = {}
    for i, (w, at, span) in sorted(enumerate(outages), key=lambda x: (x[1][0], x[1][1])):
        where = f"{path.name}: outages[{i}]"
        if w not in workers:
            issues.append(
                SpecIssue(
                    f"{where}.worker",
                    f"no worker {w!r} in this fleet",
                    w,
                    allowed=", ".join(workers),
                    fix="name a worker of the manager's fleet.workers",
                )
            )
        elif at < last_end.get(w, -1.0):
            issues.append(
                SpecIssue(
                    f"{where}.atS",
                    f"worker {w!r} is already out at {at:g} s",
                    at,
                    allowed=f"{last_end[w]:g} or later",
                    fix="merge the overlapping outages into one, or start this one later",
                )
            )
        else:
            last_end[w] = at + span
    if issues:
        raise WorkloadError(path, issues)


def fleet_section(
    dispatcher: str, step: int, workers: tuple[str, ...], stacks: dict[str, str], result: SimResult, wl: Workload
) -> dict[str, Any]:
    rows = []
    counted = [j for j in wl.jobs if j.id not in wl.warm_up]
    for w in workers:
        money = total_row([u for name, u in result.pools.items() if name.startswith(f"{w}/")])
        starts = [
            (result.jobs[j.id].start_s, j.submit_s)
            for j in counted
            if (result.jobs[j.id].pool or "").startswith(f"{w}/")
        ]
        waits = [start - submit for start, submit in starts if start is not None]
        rows.append({"worker": w, "stack": stacks[w], "jobsRun": len(waits), **money, "waits": wait_stats(waits)})
    return {"dispatcher": dispatcher, "stepSize": step, "workers": rows}
