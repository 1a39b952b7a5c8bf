"""The engine's public entry points: load a stack spec, simulate a job list on it. Stable for other tools (the
real-Slurm comparison harness reads start times from here); see docs/whatif.md."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import yaml

from stacks.spec import StackSpec
from validation.load import decode_config, load_spec
from whatif.cluster import ClusterModel, build_cluster
from whatif.engine import Engine
from whatif.model import Job, JobOutcome, SimOptions, SimResult

PROJECT_ROOT = Path(__file__).resolve().parents[1]

__all__ = ["Job", "JobOutcome", "SimOptions", "SimResult", "load_stack_spec", "simulate", "cluster_of", "stack_path"]


def stack_path(name: str, root: Path = PROJECT_ROOT) -> Path:
    return root / f"Pulumi.{name}.yaml"


def read_stack_config(path: Path) -> dict[str, Any]:
    """The ``config:`` map of a ``Pulumi.<stack>.yaml`` (the preview reads it the same way)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return dict(doc.get("config") or {})


def load_stack_spec(stack: str | Path | dict[str, Any]) -> StackSpec:
    """A validated spec from a stack name, a stack file, or a config dict; bad input raises ``SpecError`` with every
    problem (the preview's messages)."""
    if isinstance(stack, dict):
        raw = decode_config(stack) if any(":" in k for k in stack) else stack
    else:
        path = stack if isinstance(stack, Path) else stack_path(stack)
        raw = decode_config(read_stack_config(path))
    spec, _warnings = load_spec(raw)
    return spec


def cluster_of(spec: StackSpec, name: str = "stack", options: SimOptions | None = None) -> ClusterModel:
    opts = options or SimOptions()
    return build_cluster(spec, name, opts.scheduler, opts.spot_interruptions_per_node_month)


def simulate(spec: StackSpec | ClusterModel, jobs: Sequence[Job], seed: int = 0,
             options: SimOptions | None = None, name: str = "stack") -> SimResult:
    """Run ``jobs`` through the stack's scheduler; deterministic for (spec, jobs, seed, options)."""
    opts = options or SimOptions()
    cluster = spec if isinstance(spec, ClusterModel) else cluster_of(spec, name, opts)
    unknown = sorted({j.queue for j in jobs} - set(cluster.queues))
    if unknown:
        raise ValueError(f"jobs name queues the stack does not have: {', '.join(unknown)} "
                         f"(allowed: {', '.join(cluster.queues)})")
    return Engine(cluster, jobs, seed, opts).run()
