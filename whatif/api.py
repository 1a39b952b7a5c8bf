"""The engine's public entry points: load a stack spec, simulate a job list on it. Stable for other tools (the
real-Slurm comparison harness reads start times from here); see docs/whatif.md."""

from __future__ import annotations

from typing import Sequence

from stacks.spec.stack import StackSpec
from whatif.cluster import ClusterModel
from whatif.model import Job, JobOutcome, SimOptions, SimResult
from whatif.run import simulate_jobs
from whatif.stack import PROJECT_ROOT, cluster_of, load_stack_spec, read_stack_config, stack_path

__all__ = [
    "Job",
    "JobOutcome",
    "SimOptions",
    "SimResult",
    "load_stack_spec",
    "simulate",
    "cluster_of",
    "stack_path",
    "read_stack_config",
    "PROJECT_ROOT",
]


def simulate(
    spec: StackSpec | ClusterModel,
    jobs: Sequence[Job],
    seed: int = 0,
    options: SimOptions | None = None,
    name: str = "stack",
) -> SimResult:
    """Run ``jobs`` through the stack's scheduler; deterministic for (spec, jobs, seed, options)."""
    opts = options or SimOptions()
    cluster = spec if isinstance(spec, ClusterModel) else cluster_of(spec, name, opts)
    unknown = sorted({j.queue for j in jobs} - set(cluster.queues))
    if unknown:
        raise ValueError(
            f"jobs name queues the stack does not have: {', '.join(unknown)} (allowed: {', '.join(cluster.queues)})"
        )
    return simulate_jobs(cluster, jobs, seed, opts)
