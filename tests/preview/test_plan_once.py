"""Plan once, render many (the plan is the one truth every output reads): one offline preview validates a stack once and
runs every planning function once (per pool where it is per pool), although the preview, the program it runs in-process,
the preview's summaries and a diff's second look all read the plan. Counted by wrapping the real functions wherever a
module bound them.

Validation checks ``podStart`` with the same ``pod_start_plan`` before any plan exists (a validation rule, not
planning); calls made from ``stacks/validate/`` are counted apart and not held to once."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from stacks.plan import (
    facts,
    fleet,
    gpu_runtime,
    gpu_runtime_plan,
    kueue_topology,
    maintenance,
    pod_start,
    quota,
    slurm,
    stack,
)
from preview.engine import PROJECT_ROOT, read_stack_file
from preview.run import preview_stack
from stacks.validate import load, planned

VALIDATION_DIR = str(Path(load.__file__).parent)
COUNTED = {
    "pool_facts": facts.pool_facts,
    "pod_start_plan": pod_start.pod_start_plan,
    "plan_slurm": slurm.plan_slurm,
    "pool_placements": kueue_topology.pool_placements,
    "runtime_plan": gpu_runtime_plan.runtime_plan,
    "quota_plan": quota.quota_plan,
    "maintenance_policy": maintenance.maintenance_policy,
    "plan_stack": stack.plan_stack,
    "load_spec": load.load_spec,
    "fleet_plan": fleet.fleet_plan,
    "operator_in_stack": gpu_runtime.operator_in_stack,
}
PER_POOL = {"pool_facts", "pod_start_plan"}


def _pool_of(name: str, args: tuple) -> str:
    if name == "pool_facts":
        return args[1].name
    if name == "pod_start_plan":
        return args[1].name
    return ""


@pytest.fixture
def calls(monkeypatch):
    """(function, pool) -> calls from outside stacks/validate/; ('validation', function) -> calls from stacks/validate/."""
    counted: Counter = Counter()

    def wrap(name, original):
        def counting(*args, **kwargs):
            caller = sys._getframe(1).f_code.co_filename  # a validation rule, not the planner's entry
            from_validation = caller.startswith(VALIDATION_DIR) and not caller.endswith("planned.py")
            counted[("validation", name) if from_validation else (name, _pool_of(name, args))] += 1
            return original(*args, **kwargs)

        return counting

    wrappers = {id(fn): wrap(name, fn) for name, fn in COUNTED.items()}
    for module in list(sys.modules.values()):
        if module is None or not getattr(module, "__file__", None) or ".venv" in (module.__file__ or ""):
            continue
        for attr, value in list(vars(module).items()):
            if id(value) in wrappers and value in COUNTED.values():
                monkeypatch.setattr(module, attr, wrappers[id(value)])
    planned.forget()
    yield counted
    planned.forget()


@pytest.mark.parametrize(
    "stack_name, scheduler",
    [
        ("gke-kueue", "kueue"),
        ("gke-h100-512", "slurm"),
        ("eks-p5-efa", None),
        ("eks-kueue", "kueue"),
        ("gke-flex-start-tas", "kueue"),
    ],
)
def test_each_planning_function_runs_once_per_preview(calls, stack_name, scheduler):
    report = preview_stack(stack_name)
    assert not report.errors and report.resources, report.errors  # the program really ran
    pools = [p["pool"] for p in report.gpu_runtime]
    assert pools
    outside = {k: v for k, v in calls.items() if k[0] != "validation"}
    assert outside[("load_spec", "")] == 1, "the program validated the config again"
    assert outside[("plan_stack", "")] == 1
    for name in PER_POOL:
        assert {pool: outside.get((name, pool), 0) for pool in pools} == dict.fromkeys(pools, 1), name
    for name in ("runtime_plan", "maintenance_policy", "operator_in_stack"):  # stack-wide: never once per pool
        assert outside[(name, "")] == 1, name
    assert outside.get(("quota_plan", ""), 0) == (1 if scheduler else 0)
    assert outside.get(("plan_slurm", ""), 0) == (1 if scheduler == "slurm" else 0)
    assert outside.get(("pool_placements", ""), 0) == (1 if scheduler == "kueue" else 0)
    assert set(k[0] for k in outside) <= set(COUNTED)


def test_the_counter_sees_a_second_plan(calls):
    """Without the kept plan, the program plans again: the counter must see it (so the test above can fail)."""
    preview_stack("dev")
    planned.forget()
    preview_stack("dev")
    assert calls[("plan_stack", "")] == 2 and calls[("load_spec", "")] == 2


def _pool_names(stack_name: str) -> list[str]:
    """The pool names written in a stack file (read as data: no validation, so nothing is counted)."""
    config = read_stack_file(PROJECT_ROOT / f"Pulumi.{stack_name}.yaml")
    return [p["name"] for p in config.get("gpu-cluster:nodePools") or []]


@pytest.mark.slow
def test_a_fleet_manager_preview_plans_itself_and_each_worker_once(calls):
    """The manager's preview previews its workers' stack files first (their outputs feed its StackReferences), each
    through the same path: three stacks, each validated once and planned once, the program of each reading its plan.
    The workers are Kueue stacks (placements and quota once each); the manager has no pool and no scheduling."""
    workers = ("fleet-gke", "fleet-eks")
    expected_pools = Counter(name for w in workers for name in _pool_names(w))
    assert _pool_names("fleet") == [] and sum(expected_pools.values()) >= 4
    report = preview_stack("fleet")
    assert not report.errors and report.resources, report.errors
    assert [c["name"] for c in report.fleet["clusters"]] == ["manager", "gke", "eks"]  # the workers were previewed
    outside = {k: v for k, v in calls.items() if k[0] != "validation"}
    stacks = 1 + len(workers)
    for name in ("load_spec", "plan_stack", "fleet_plan", "runtime_plan", "maintenance_policy"):
        assert outside[(name, "")] == stacks, name
    for name in PER_POOL:
        assert Counter({pool: n for (fn, pool), n in outside.items() if fn == name}) == expected_pools, name
    assert outside[("pool_placements", "")] == len(workers) and outside[("quota_plan", "")] == len(workers)
    assert outside.get(("plan_slurm", ""), 0) == 0


def test_a_diff_validates_and_plans_each_side_once(calls):
    """A diff previews both sides and then reads each side's spec for the spec diff: that second look gets the kept
    answer (before: ``load_spec`` again per side). Two different configs: two validations, two plans."""
    from preview.diff.compare import OK, diff_configs

    base = read_stack_file(PROJECT_ROOT / "Pulumi.gke-h100-512.yaml")
    head = read_stack_file(PROJECT_ROOT / "Pulumi.gke-kueue.yaml")
    diff = diff_configs("gke-kueue", base, head, "base")
    assert diff.base.state == OK and diff.head.state == OK and diff.base.spec is not None
    outside = {k: v for k, v in calls.items() if k[0] != "validation"}
    assert outside[("load_spec", "")] == 2 and outside[("plan_stack", "")] == 2
