"""One what-if run from names and files to a report dict: load and check the stack and the workload, simulate, sum
up. Shared by the CLI, the trace study and the benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from whatif.cluster import ClusterModel
from whatif.core import SchedulerFactory
from whatif.engine import Engine
from whatif.metrics import summarize, waits_of
from whatif.model import Job, SimOptions, SimResult, Workload
from whatif.stack import cluster_of, load_stack_spec, stack_path
from whatif.workload.load import WorkloadError, load_workload
from stacks.validate.issues import SpecIssue

if TYPE_CHECKING:
    from stacks.spec.stack import StackSpec


@dataclass
class Run:
    cluster: ClusterModel
    workload: Workload
    result: SimResult
    report: dict[str, Any]


def run_whatif(
    stack: str | Path | dict[str, Any],
    workload: Path,
    seed: int = 0,
    options: SimOptions | None = None,
    name: str | None = None,
) -> Run:
    """Raises SpecError (stack) or WorkloadError (workload) with every problem at once."""
    opts = options or SimOptions()
    label = name or (
        stack if isinstance(stack, str) else "stack" if isinstance(stack, dict) else stack.stem.removeprefix("Pulumi.")
    )
    spec = load_stack_spec(stack)
    if _is_manager(spec):  # a MultiKueue fleet: the workers' stacks, dispatched by the manager
        from whatif.fleet.run import simulate_fleet  # lazy: only a fleet manager's run loads the fleet model

        root = stack.parent if isinstance(stack, Path) else stack_path(stack if isinstance(stack, str) else "x").parent
        cluster, wl, result, fleet = simulate_fleet(
            spec, label, root, load_stack_spec, lambda s, n: cluster_of(s, n, opts), load_workload, workload, seed, opts
        )
        report = summarize(result, cluster, wl, seed)
        report["fleet"] = fleet
        return Run(cluster, wl, result, report)
    cluster = cluster_of(spec, label, opts)
    wl = load_workload(workload, cluster, seed)
    if wl.outages:  # only a MultiKueue manager can lose a worker
        raise WorkloadError(
            workload,
            [
                SpecIssue(
                    f"{workload.name}: outages",
                    f"stack {label} is not a fleet manager",
                    [w for w, _, _ in wl.outages],
                    allowed="a stack with fleet: {role: manager}",
                    fix="remove outages, or run the workload against the fleet's manager stack",
                )
            ],
        )
    return run_cluster(cluster, wl, seed, opts)


def _is_manager(spec: StackSpec) -> bool:
    if spec.fleet is None:
        return False
    from whatif.fleet.cluster import is_manager  # lazy: the fleet model is for fleet stacks only (import floor)

    return is_manager(spec)


def scheduler_for(cluster: ClusterModel) -> SchedulerFactory:
    """The scheduler family the stack renders: Slurm, or Kueue (also a stack without scheduling: one FIFO queue).
    Imported here, not at the top: a run loads only its own scheduler's modules (the import floor, bench/)."""
    if cluster.scheduler == "slurm":
        from whatif.slurm.sched import SlurmScheduler

        return SlurmScheduler
    from whatif.kueue.sched import KueueScheduler

    return KueueScheduler


def simulate_jobs(cluster: ClusterModel, jobs: Sequence[Job], seed: int, options: SimOptions) -> SimResult:
    return Engine(cluster, jobs, seed, options, scheduler_for(cluster)).run()


def run_cluster(cluster: ClusterModel, wl: Workload, seed: int, options: SimOptions) -> Run:
    result = simulate_jobs(cluster, wl.jobs, seed, options)
    return Run(cluster, wl, result, summarize(result, cluster, wl, seed))


def chart(run: Run, path: Path) -> None:
    from whatif.report.chart import write_chart

    title = (
        f"{run.cluster.stack} ({run.cluster.scheduler}) — {run.workload.name}: "
        f"utilization {100 * (run.report['total']['utilization'] or 0):.0f} %, "
        f"$ {run.report['total']['effectiveUsdPerUsedGpuHour'] or 0:.2f} per used GPU-hour"
    )
    write_chart(path, title, run.result.samples, waits_of(run.result, run.workload))


__all__ = ["Run", "run_whatif", "run_cluster", "simulate_jobs", "scheduler_for", "chart", "replace"]
