"""whatif/ has no import circle between its modules, counting every import (module level, inside functions and
under TYPE_CHECKING): the engine knows schedulers only by the ``core.Scheduler`` protocol, the schedulers know the
engine only by ``core.Host``, and the run picks the scheduler (so a scheduler can be added or changed alone)."""

from __future__ import annotations

from pathlib import Path

from tests.support.project.import_graph import find_cycle, imports_in, package_of, unit_graph

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def whatif_graph() -> dict[str, set[str]]:
    files = sorted((ROOT / "whatif").rglob("*.py"))
    modules = {_module(p) for p in files}
    edges = []
    for p in files:
        for imp in imports_in(p.read_text(encoding="utf-8"), package_of(p, ROOT)):
            if imp.module in modules and imp.module != _module(p):
                edges.append((_module(p), imp.module))
    return unit_graph(edges)


def test_whatif_modules_import_each_other_without_a_circle():
    graph = whatif_graph()
    assert "whatif.core" in graph["whatif.engine"] and "whatif.engine" in graph["whatif.run"]  # the real graph
    assert find_cycle(graph) is None, f"import circle: {' -> '.join(find_cycle(graph) or [])}"


def test_the_engine_and_the_schedulers_meet_only_in_core_and_run():
    graph = whatif_graph()
    schedulers = {"whatif.kueue.sched", "whatif.slurm.sched", "whatif.kueue.preempt", "whatif.slurm.backfill"}
    assert not graph["whatif.engine"] & schedulers
    assert all("whatif.engine" not in graph[s] for s in schedulers)
    assert {"whatif.kueue.sched", "whatif.slurm.sched"} <= graph["whatif.run"]


def test_kueue_preemption_needs_no_engine():
    graph = whatif_graph()
    assert graph["whatif.kueue.preempt"] <= {"whatif.kueue.cohort", "whatif.cluster", "whatif.model"}, graph[
        "whatif.kueue.preempt"
    ]
