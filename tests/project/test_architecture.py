"""The architecture, proven by the suite: one allowed-imports table for every top-level package, no Pulumi in the pure
packages, no import cycle between packages, a flat-enough ``preview/`` and small source files.

Data flow (ARCHITECTURE.md): catalog <- stacks (spec <- plan <- validate) <- render / whatif; compose is the only bridge to components;
policies and preview read resources and the catalog. Every check below has a synthetic counterpart that must fail, so
a checker that silently accepts everything would be caught.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from tests.support.project.import_graph import (
    Import,
    find_cycle,
    imported_names,
    imports_in,
    module_graph,
    module_name,
    package_of,
    project_files,
    refused_imports,
    top_level_units,
    unit_graph,
    unit_of,
    unit_of_module,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]

PURE = {"catalog", "stacks", "stacks.spec", "stacks.plan", "stacks.validate", "render", "whatif"}
"""No ``pulumi``/``pulumi_*`` import anywhere in these: they run without the Pulumi runtime."""

SPEC, PLAN, VALIDATE = "stacks.spec", "stacks.plan", "stacks.validate"
_SPEC_SIDE = {"catalog", SPEC, PLAN, "render"}
ALLOWED: dict[str, set[str]] = {
    "catalog": set(),
    "stacks": set(),  # stacks/__init__.py: the docstring that says what a stack is
    SPEC: {"catalog"},
    PLAN: {"catalog", SPEC},
    "render": {"catalog", SPEC, PLAN},
    VALIDATE: {"catalog", SPEC, PLAN},  # checks read the plan's derived facts (validate/ refuses what plan/ derives)
    "whatif": _SPEC_SIDE | {VALIDATE},  # loads stack files as the preview does; never compose or components
    # components take plans (never the spec): never compose, validation, policies or preview
    "components": {"catalog", PLAN, "render"},
    # the only bridge between the spec and components/
    "compose": {"catalog", PLAN, "render", VALIDATE, "components"},  # reads StackPlan.spec, imports no spec
    # the pack reads concrete resources: never components/compose/preview/validation
    "policies": {"catalog", SPEC, PLAN},
    # runs __main__.py by path, so never components/compose
    "preview": _SPEC_SIDE | {VALIDATE, "policies"},
    "__main__.py": {"catalog", "compose", VALIDATE},
}
PROJECT_UNITS = set(ALLOWED) | {"bench", "tests"}
ALLOWED["bench"] = PROJECT_UNITS - {"bench", "tests"}  # benchmarks drive anything, never the tests
ALLOWED["tests"] = PROJECT_UNITS - {"tests"}

MAX_PREVIEW_TOP_MODULES = 12
MAX_LINES = 400
OVER_MAX_LINES: set[str] = set()
"""Files allowed over MAX_LINES (none: split a file by concern instead)."""

FILES = project_files(PROJECT_ROOT)


def _rel(path: Path) -> str:
    return path.relative_to(PROJECT_ROOT).as_posix()


def _imports(path: Path) -> list[Import]:
    return imports_in(path.read_text(encoding="utf-8"), package_of(path, PROJECT_ROOT))


def test_every_top_level_package_is_in_the_table():
    missing = top_level_units(PROJECT_ROOT) - set(ALLOWED)
    assert not missing, f"add {sorted(missing)} to ALLOWED in {__name__} (which packages may each import?)"


def test_the_table_names_only_known_units_and_the_core_packages_exist():
    assert all(allowed <= PROJECT_UNITS for allowed in ALLOWED.values())
    present = top_level_units(PROJECT_ROOT)
    assert present >= {
        "catalog",
        SPEC,
        PLAN,
        "render",
        VALIDATE,
        "components",
        "compose",
        "policies",
        "preview",
        "__main__.py",
        "tests",
    }  # whatif (and bench) may be absent; these may not


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_every_import_is_allowed_by_the_table(path: Path):
    refused = refused_imports(unit_of(path, PROJECT_ROOT), _imports(path), ALLOWED, PROJECT_UNITS, PURE)
    assert not refused, f"{_rel(path)}: " + "; ".join(refused)


def test_the_real_import_graph_between_packages_is_acyclic():
    edges = [(unit_of(p, PROJECT_ROOT), unit_of_module(imp.module)) for p in FILES for imp in _imports(p)]
    graph = unit_graph((src, dst) for src, dst in edges if dst in PROJECT_UNITS)
    assert graph["compose"] >= {"components", VALIDATE}  # the graph is the real one, not an empty stand-in
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph) or [])}"


def test_preview_keeps_at_most_twelve_top_level_modules():
    modules = sorted(p.name for p in (PROJECT_ROOT / "preview").glob("*.py"))
    assert len(modules) <= MAX_PREVIEW_TOP_MODULES, modules


def _long_files() -> set[str]:
    return {_rel(p) for p in FILES if len(p.read_text(encoding="utf-8").splitlines()) > MAX_LINES}


def test_no_source_file_is_over_400_lines():
    assert not _long_files() - OVER_MAX_LINES, f"split these (over {MAX_LINES} lines)"


def test_the_long_file_allow_list_is_exact():
    assert not OVER_MAX_LINES - _long_files(), "now short enough: remove them from OVER_MAX_LINES"


# The checkers refuse what they must: synthetic bad code, never written to disk.


@pytest.mark.parametrize(
    "unit, source, package, expected",
    [
        ("catalog", "import stacks.spec.stack\n", ["catalog"], "line 1: stacks.spec.stack"),
        ("components", "def f():\n    from compose import gke\n", ["components"], "line 2: compose"),
        (
            "policies",
            "from ..pools import x\nfrom preview.engine import run\n",
            ["policies", "rules"],
            "line 2: preview.",
        ),
        ("preview", "import importlib\nimportlib.import_module('compose.gke')\n", ["preview"], "line 2: compose.gke"),
        ("render", "from pulumi.runtime import rpc\n", ["render"], "pure: no Pulumi SDK"),
        (VALIDATE, "import pulumi_kubernetes as k8s\n", ["stacks", "validate"], "pure: no Pulumi SDK"),
        ("bench", "from tests.support import edit\n", ["bench"], "line 1: tests.support"),
        (PLAN, "from stacks.validate.load import load_stack\n", ["stacks", "plan"], "line 1: stacks.validate.load"),
        (SPEC, "from ..plan.stack import StackPlan\n", ["stacks", "spec"], "line 1: stacks.plan.stack"),
    ],
)
def test_the_import_checker_refuses_a_bad_import(unit, source, package, expected):
    refused = refused_imports(unit, imports_in(source, package), ALLOWED, PROJECT_UNITS, PURE)
    assert len(refused) == 1 and expected in refused[0], refused


def test_the_import_checker_accepts_allowed_and_third_party_imports():
    source = "from . import models\nimport yaml\nfrom catalog import load_catalog\nimport pulumi\n"
    assert refused_imports("components", imports_in(source, ["components"]), ALLOWED, PROJECT_UNITS, PURE) == []
    assert imports_in("from . import models\n", ["spec"]) == [Import("spec.models", 1)]
    assert imports_in("from ..pools import x\n", ["policies", "rules"]) == [Import("policies.pools", 1)]


def test_the_cycle_finder_sees_a_synthetic_cycle():
    graph = unit_graph([("spec", "catalog"), ("render", "spec"), ("spec", "render")])
    assert find_cycle(graph) == ["render", "spec", "render"]
    assert find_cycle(unit_graph([("a", "b"), ("b", "c"), ("c", "a")])) == ["a", "b", "c", "a"]
    assert find_cycle(unit_graph([("a", "b"), ("a", "c"), ("b", "c")])) is None


# Plan once, render many (the plan is the one truth every output reads): no import circle between modules,
# components take plans only.


def _module_sources() -> dict[str, tuple[str, list[str]]]:
    return {module_name(p, PROJECT_ROOT): (p.read_text(encoding="utf-8"), package_of(p, PROJECT_ROOT)) for p in FILES}


def test_no_import_circle_between_modules_anywhere_module_level_or_lazy():
    graph = module_graph(_module_sources())
    assert {"stacks.plan.stack", "compose.stack", "whatif.engine"} <= set(graph)  # the real tree, not an empty stand-in
    assert "stacks.plan.facts" in graph["stacks.plan.stack"]
    cycle = find_cycle(graph)
    assert cycle is None, f"import circle: {' -> '.join(cycle or [])}"


def test_the_module_graph_sees_a_lazy_circle_and_a_submodule_import():
    sources = {
        "pkg": ("", ["pkg"]),
        "pkg.a": ("def f():\n    from pkg import b\n", ["pkg"]),
        "pkg.b": ("from .a import f\n", ["pkg"]),
    }
    graph = module_graph(sources)
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]


def plan_only_refusals(source: str) -> list[str]:
    """What a component may not import: any spec module (components read plans, never the spec) and any planning
    function (a plan's types and constants are fine: ``PoolPlan``, ``SlurmPlan``, ``CA_PROVISIONING_ARGS``)."""
    refused = []
    for imp in imports_in(source, ["components"]):
        if unit_of_module(imp.module) == SPEC:
            refused.append(f"line {imp.line}: {imp.module} (a spec module)")
    for module, name, line in imported_names(source):
        if unit_of_module(module) != PLAN:
            continue
        value = getattr(importlib.import_module(module), name, None)
        if value is None or inspect.isroutine(value) or inspect.ismodule(value):
            refused.append(f"line {line}: {module}.{name} (a planning function: take it from the plan instead)")
    return refused


@pytest.mark.parametrize("path", [p for p in FILES if unit_of(p, PROJECT_ROOT) == "components"], ids=_rel)
def test_components_take_plans_only(path: Path):
    source = path.read_text(encoding="utf-8")
    assert not [i for i in imports_in(source, ["components"]) if i.module == PLAN], (
        "import plan types by name (from stacks.plan.x import T)"
    )
    refused = plan_only_refusals(source)
    assert not refused, f"{_rel(path)}: " + "; ".join(refused)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from stacks.spec.stack import NodePool\n", "stacks.spec.stack (a spec module)"),
        ("def f():\n    import stacks.spec.scheduling\n", "stacks.spec.scheduling (a spec module)"),
        (
            "from stacks.plan.pod_start import pod_start_plan\n",
            "stacks.plan.pod_start.pod_start_plan (a planning function",
        ),
        ("from stacks.plan.slurm import SlurmPlan, plan_slurm\n", "stacks.plan.slurm.plan_slurm (a planning function"),
    ],
)
def test_the_plans_only_checker_refuses_spec_and_planning_functions(source, expected):
    refused = plan_only_refusals(source)
    assert len(refused) == 1 and expected in refused[0], refused


def test_the_plans_only_checker_accepts_plan_types_and_constants():
    assert (
        plan_only_refusals(
            "from stacks.plan.stack import PoolPlan\nfrom stacks.plan.queued import CA_PROVISIONING_ARGS\n"
        )
        == []
    )
