"""Run a scenario (``whatif_scenarios.py``) on a real Slurm cluster and through the whatif simulator, and compare each
job's start order and start times.

The simulator gets the same rendered stack and the same job list, with each job's submit time as really measured
(so submission jitter is not counted against it). Agreement: the same start order (starts closer than
``TIE_S`` count as simultaneous: one scheduling pass) and every start within ``tolerance_s`` of the prediction:
``tolerance_s`` per scheduling step, the scheduler's own granularity (a start may wait for the next backfill cycle
or the main scheduler's deferred pass) plus slurmd's launch of the batch script (0.1-0.3 s).
"""
from __future__ import annotations

import importlib
from itertools import combinations
from dataclasses import dataclass
from typing import Any

from catalog import load_catalog
from plan.slurm import SlurmPlan, plan_slurm
from plan.facts import pool_facts
from tests.support.slurm.jobs import RealOutcome
from tests.support.whatif.scenarios import Scenario
from validation.load import decode_config, load_spec

TIE_S = 0.5


def plan_of(scenario: Scenario) -> SlurmPlan:
    spec, _ = load_spec(decode_config(scenario.config))
    plan = plan_slurm(spec.scheduling, [pool_facts(spec, p, load_catalog()) for p in spec.node_pools])
    if scenario.scheduler_type:
        plan.directives["SchedulerType"] = scenario.scheduler_type
    return plan


BATCH_SCHED_DELAY_S = 3.0
"""Slurm's default ``batch_sched_delay``: the main scheduler may defer a newly submitted batch job this long."""


def tolerance_s(scenario: Scenario) -> float:
    """Per scheduling step: the next backfill cycle (``bf_interval``) or, without backfill, the main scheduler's
    deferral of new batch jobs (``batch_sched_delay``), plus 1 s (slurmctld's once-a-second background pass and
    slurmd's launch of the script)."""
    if not scenario.backfill:
        return BATCH_SCHED_DELAY_S + 1.0
    return float(scenario.config["gpu-cluster:scheduling"]["slurm"]["backfill"]["intervalSeconds"]) + 1.0


def simulate(scenario: Scenario, real: dict[str, RealOutcome]) -> dict[str, Any]:
    """The simulator's JobOutcome per job id (``whatif.api``; imported here: the package may be absent)."""
    api = importlib.import_module("whatif.api")
    jobs = [api.Job(**{**job.__dict__, "submit_s": round(real[job.id].submit_s, 3)}) for job in scenario.jobs]
    options = api.SimOptions(nodes_up="max", spot_interruptions=False, scheduler="slurm", backfill=scenario.backfill)
    return api.simulate(api.load_stack_spec(scenario.config), jobs, seed=0, options=options).jobs


@dataclass(frozen=True)
class Row:
    job: str
    submit_s: float
    real_start_s: float | None
    sim_start_s: float | None
    real_nodes: str
    sim_nodes: str
    real_preempted: int
    sim_preempted: int
    real_restart_s: float | None
    """Real: when the requeued job became eligible again (Slurm's requeue delay); sim: its second start."""
    sim_restart_s: float | None

    @property
    def delta_s(self) -> float | None:
        if self.real_start_s is None or self.sim_start_s is None:
            return None
        return self.real_start_s - self.sim_start_s


@dataclass(frozen=True)
class Comparison:
    scenario: Scenario
    rows: tuple[Row, ...]
    tolerance_s: float
    phase_of: dict[str, int]

    def order(self, which: str) -> list[list[str]]:
        """Job ids in start order, grouped: starts within TIE_S of the group's first are one scheduling pass."""
        starts = sorted((getattr(r, f"{which}_start_s"), r.job) for r in self.rows
                        if getattr(r, f"{which}_start_s") is not None)
        groups: list[list[str]] = []
        first = None
        for t, job in starts:
            if first is None or t - first > TIE_S:
                groups.append([])
                first = t
            groups[-1].append(job)
        return [sorted(g) for g in groups]

    def allowed_s(self, row: Row) -> float:
        """``tolerance_s`` per scheduling step: a start may lag the event that frees its nodes by one interval, and
        a job that waits for another job's end inherits that job's lag (the n-th start group of a phase: n steps)."""
        phase = self.phase_of[row.job]
        groups = [g for g in self.order("sim") if self.phase_of[g[0]] == phase]
        step = next(i for i, g in enumerate(groups, 1) if row.job in g)
        return step * self.tolerance_s

    def order_pairs(self) -> tuple[int, list[str]]:
        """(pairs checked, pairs that disagree). A pair the simulator starts in one pass (within TIE_S) must start
        within ``tolerance_s`` of each other in reality; any other pair must start in the same order."""
        pairs, bad = 0, []
        started = [r for r in self.rows if r.real_start_s is not None and r.sim_start_s is not None]
        for a, b in combinations(started, 2):
            pairs += 1
            ds, dr = b.sim_start_s - a.sim_start_s, b.real_start_s - a.real_start_s  # type: ignore[operator]
            ok = abs(dr) <= self.tolerance_s if abs(ds) <= TIE_S else ds * dr > 0
            if not ok:
                bad.append(f"{a.job}/{b.job}")
        return pairs, bad

    @property
    def same_order(self) -> bool:
        return not self.order_pairs()[1] and all((r.real_start_s is None) == (r.sim_start_s is None)
                                                 for r in self.rows)

    @property
    def max_abs_delta_s(self) -> float:
        return max((abs(r.delta_s) for r in self.rows if r.delta_s is not None), default=0.0)

    @property
    def within_tolerance(self) -> int:
        return sum(1 for r in self.rows if r.delta_s is not None and abs(r.delta_s) <= self.allowed_s(r))

    @property
    def agrees(self) -> bool:
        return self.same_order and self.within_tolerance == len(self.rows) and all(
            r.real_preempted == r.sim_preempted for r in self.rows)


def compare(scenario: Scenario, real: dict[str, RealOutcome], sim: dict[str, Any]) -> Comparison:
    rows = []
    for job in scenario.jobs:
        r, s = real[job.id], sim[job.id]
        rows.append(Row(job.id, r.submit_s, r.start_s, s.start_s, r.nodes[0] if r.nodes else "",
                        _hostlist(s.nodes[:job.nodes]) if s.starts else "", r.preemptions, s.preemptions,
                        r.eligible_again_s, s.starts[1] if len(s.starts) > 1 else None))
    phase_of = {j.id: i for i, p in enumerate(scenario.phases) for j in p.jobs}
    return Comparison(scenario, tuple(rows), tolerance_s(scenario), phase_of)


def _hostlist(nodes: tuple[str, ...]) -> str:
    """``("h100-0", "h100-1")`` -> ``h100-[0-1]`` (Slurm's spelling, for side-by-side reading)."""
    if len(nodes) <= 1:
        return "".join(nodes)
    prefix = nodes[0].rsplit("-", 1)[0]
    nums = sorted(int(n.rsplit("-", 1)[1]) for n in nodes)
    if nums == list(range(nums[0], nums[-1] + 1)):
        return f"{prefix}-[{nums[0]}-{nums[-1]}]"
    return f"{prefix}-[{','.join(map(str, nums))}]"


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def markdown(c: Comparison) -> str:
    pairs, bad = c.order_pairs()
    lines = [f"**{c.scenario.name}**: {c.scenario.what}. Start order real `{c.order('real')}`, simulated "
             f"`{c.order('sim')}`: **{'same' if c.same_order else 'DIFFERENT'}** ({pairs - len(bad)}/{pairs} pairs "
             f"agree{'; not: ' + ', '.join(bad) if bad else ''}); starts within the allowed lag: "
             f"**{c.within_tolerance}/{len(c.rows)}**, max |Δ| {c.max_abs_delta_s:.2f} s.",
             "",
             "| job | submit s | real start s | sim start s | Δ s | allowed ±s | real nodes | sim nodes | "
             "preempted real/sim | restart real (eligible) / sim s |",
             "|---|---:|---:|---:|---:|---:|---|---|---|---|"]
    for r in c.rows:
        restart = "—" if r.real_restart_s is None and r.sim_restart_s is None else \
            f"{_f(r.real_restart_s)} / {_f(r.sim_restart_s)}"
        lines.append(f"| {r.job} | {r.submit_s:.2f} | {_f(r.real_start_s)} | {_f(r.sim_start_s)} | {_f(r.delta_s)} | "
                     f"{c.allowed_s(r):.0f} | {r.real_nodes} | {r.sim_nodes} | {r.real_preempted}/{r.sim_preempted} | "
                     f"{restart} |")
    return "\n".join(lines)
