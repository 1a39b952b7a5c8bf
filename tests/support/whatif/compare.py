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
import re
from itertools import combinations
from dataclasses import dataclass, replace
from typing import Any

from catalog import load_catalog
from stacks.plan.slurm import SlurmPlan, plan_slurm
from stacks.plan.facts import pool_facts
from tests.support.slurm.jobs import RealOutcome
from tests.support.whatif.scenarios import Scenario
from stacks.validate.load import decode_config, load_spec

TIE_S = 0.5
FINE_ORDER_GAP_S = 4.0
"""Many-job scenarios report how many pairs the simulator starts more than one main-scheduler step apart
(``batch_sched_delay`` 3 s + 1 s) start in the same order in reality; pairs more than one backfill cycle apart
(``tolerance_s``) must."""
LAG_PER_START_S = 1.0
"""Real Slurm starts a job 0.2-1 s after the event that lets it (its next pass, slurmd's launch), and a job that
waits for another inherits that lag: many-job scenarios allow one backfill cycle plus this per earlier start group."""
UTILIZATION_PTS = 8.0
MEAN_WAIT_SHARE = 0.15
"""Many-job scenarios: utilization within 8 points and mean wait within 15 % of reality. The real run is longer by
the lag above (about 1 s per start along each node's chain of 10-15 jobs of 15-40 s: 5-8 % of the makespan)."""


def plan_of(scenario: Scenario) -> SlurmPlan:
    spec, _ = load_spec(decode_config(scenario.config))
    plan = plan_slurm(spec.scheduling, [pool_facts(spec, p, load_catalog()) for p in spec.node_pools])
    if scenario.scheduler_type:
        plan.directives["SchedulerType"] = scenario.scheduler_type
    return plan


JOB_CHECK_S = 30.0
"""slurmctld's periodic job pass (PERIODIC_TIMEOUT, 30 s): a job on resumed nodes leaves CONFIGURING there."""
POWER_SAVE_INTERVAL_S = 10.0
"""``power_save_interval`` (10 s by default): slurmctld suspends a node at its first power-save pass after
SuspendTime."""
BATCH_SCHED_DELAY_S = 3.0
"""Slurm's default ``batch_sched_delay``: the main scheduler may defer a newly submitted batch job this long."""


def tolerance_s(scenario: Scenario) -> float:
    """Per scheduling step: the next backfill cycle (``bf_interval``) or, without backfill, the main scheduler's
    deferral of new batch jobs (``batch_sched_delay``), plus 1 s (slurmctld's once-a-second background pass and
    slurmd's launch of the script)."""
    if not scenario.backfill:
        return BATCH_SCHED_DELAY_S + 1.0
    if scenario.boot_s is not None:  # a start on resumed nodes waits for slurmctld's periodic job pass
        return _bf_interval(scenario) + 1.0 + JOB_CHECK_S
    return _bf_interval(scenario) + 1.0


def _bf_interval(scenario: Scenario) -> float:
    params = plan_of(scenario).directives["SchedulerParameters"]  # as rendered (bf_interval=30 unless set)
    return float(dict(p.split("=") for p in params.split(",") if "=" in p)["bf_interval"])


def simulate(scenario: Scenario, real: dict[str, RealOutcome]) -> dict[str, Any]:
    """The simulator's JobOutcome per job id (``whatif.api``; imported here: the package may be absent)."""
    return simulate_power(scenario, real)[0]


def simulate_power(scenario: Scenario, real: dict[str, RealOutcome]) -> tuple[dict[str, Any], list]:
    """(JobOutcome per job id, the power-saving log: (time, "resume" | "suspend", node)). A scenario with scaling
    pools runs from minNodes (``nodes_up="min"``) with the harness's node boot time as the provisioning delay."""
    api = importlib.import_module("whatif.api")
    run = importlib.import_module("whatif.run")
    jobs = [api.Job(**{**job.__dict__, "submit_s": round(real[job.id].submit_s, 3)}) for job in scenario.jobs]
    power = scenario.boot_s is not None
    options = api.SimOptions(
        nodes_up="min" if power else "max", spot_interruptions=False, scheduler="slurm", backfill=scenario.backfill
    )
    cluster = api.cluster_of(api.load_stack_spec(scenario.config), "scenario", options)
    if power:
        cluster = replace(cluster, pools={k: replace(p, provision_s=scenario.boot_s) for k, p in cluster.pools.items()})
    engine = run.Engine(cluster, jobs, 0, options, run.scheduler_for(cluster))
    result = engine.run()
    saving = getattr(engine.scheduler, "power", None)
    if saving is None:
        return result.jobs, []
    later = [
        (t, "suspend", node)
        for pool in saving.pools.values()
        for t, node in saving.after_end(pool, result.horizon_s)[0]
    ]  # the idle pool after the last job
    return result.jobs, sorted(saving.log + later)


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
    real_end_s: float | None = None
    sim_end_s: float | None = None

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
    gpus_of: dict[str, int]
    cluster_gpus: int
    power_real: tuple[tuple[float, str, str], ...] = ()
    power_sim: tuple[tuple[float, str, str], ...] = ()
    """(time, "resume" | "suspend", node): Resume/SuspendProgram calls (real) and the simulator's decisions."""

    def order(self, which: str) -> list[list[str]]:
        """Job ids in start order, grouped: starts within TIE_S of the group's first are one scheduling pass."""
        starts = sorted(
            (getattr(r, f"{which}_start_s"), r.job) for r in self.rows if getattr(r, f"{which}_start_s") is not None
        )
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
        within ``tolerance_s`` of each other in reality; any other pair must start in the same order, unless reality
        starts the two within TIE_S (one scheduling pass of slurmctld: their order inside a pass is not a decision,
        and under load real starts 0.03 s apart came out swapped)."""
        pairs, bad = 0, []
        started = [r for r in self.rows if r.real_start_s is not None and r.sim_start_s is not None]
        for a, b in combinations(started, 2):
            pairs += 1
            ds, dr = b.sim_start_s - a.sim_start_s, b.real_start_s - a.real_start_s  # type: ignore[operator]
            ok = abs(dr) <= self.tolerance_s if abs(ds) <= TIE_S else (ds * dr > 0 or abs(dr) <= TIE_S)
            if not ok:
                bad.append(f"{a.job}/{b.job}")
        return pairs, bad

    @property
    def same_order(self) -> bool:
        return not self.order_pairs()[1] and all((r.real_start_s is None) == (r.sim_start_s is None) for r in self.rows)

    @property
    def max_abs_delta_s(self) -> float:
        return max((abs(r.delta_s) for r in self.rows if r.delta_s is not None), default=0.0)

    @property
    def within_tolerance(self) -> int:
        return sum(1 for r in self.rows if r.delta_s is not None and abs(r.delta_s) <= self.allowed_s(r))

    def restart_allowed_s(self, row: Row) -> float:
        """The requeue delay runs from the preemption, which happens when the preemptor starts: the restart inherits
        that start's lag. So it is one step after the last start group before it (the groups of its phase the
        simulator began by then, plus one), plus EligibleTime's 1 s rounding."""
        phase = self.phase_of[row.job]
        earlier = [
            g
            for g in self.order("sim")
            if self.phase_of[g[0]] == phase and min(r.sim_start_s for r in self.rows if r.job in g) <= row.sim_restart_s
        ]  # type: ignore
        return (len(earlier) + 1) * self.tolerance_s + 1.0

    @property
    def restarts_agree(self) -> bool:
        """A requeued job's restart: the real EligibleTime (whole seconds) against the simulator's second start,
        within ``restart_allowed_s`` (a preemptor that started 2.5 s late in the simulator requeues its victim
        2.5 s late too: seen under CI load, real restart 122.4 s, simulated 125.5 s)."""
        return all(
            abs(r.real_restart_s - r.sim_restart_s) <= self.restart_allowed_s(r)
            for r in self.rows
            if r.real_restart_s is not None and r.sim_restart_s is not None
        )

    @property
    def agrees(self) -> bool:
        preempted = all(r.real_preempted == r.sim_preempted for r in self.rows)
        if self.scenario.wide:
            return self.wide_agrees and preempted
        return (
            self.same_order
            and self.within_tolerance == len(self.rows)
            and preempted
            and self.restarts_agree
            and not self.power_problems()
        )

    # -- power saving: the same nodes resumed (in order) and suspended, each at the right time --------------------
    def idle_from(self, which: str) -> dict[str, float]:
        """Node -> the end of the last job that ran on it."""
        out: dict[str, float] = {}
        for r in self.rows:
            end = getattr(r, f"{which}_end_s")
            for node in hostnames(getattr(r, f"{which}_nodes")) if end is not None else []:
                out[node] = max(out.get(node, 0.0), end)
        return out

    def power_problems(self) -> list[str]:
        if self.scenario.boot_s is None:
            return []
        bad = []
        real_resumes = [(t, n) for t, k, n in self.power_real if k == "resume"]
        sim_resumes = [(t, n) for t, k, n in self.power_sim if k == "resume"]
        if [n for _, n in real_resumes] != [n for _, n in sim_resumes]:
            bad.append(f"resumed {[n for _, n in real_resumes]} (real) vs {[n for _, n in sim_resumes]} (sim)")
        for (rt, n), (st, _) in zip(real_resumes, sim_resumes):
            if abs(rt - st) > JOB_CHECK_S:
                bad.append(f"{n} resumed at {rt:.1f} (real) vs {st:.1f} (sim)")
        real_susp = {n: t for t, k, n in self.power_real if k == "suspend"}
        sim_susp = {n: t for t, k, n in self.power_sim if k == "suspend"}
        if sorted(real_susp) != sorted(sim_susp):
            bad.append(f"suspended {sorted(real_susp)} (real) vs {sorted(sim_susp)} (sim)")
        suspend_time = float(plan_of(self.scenario).directives["SuspendTime"])
        for which, susp in (("real", real_susp), ("sim", sim_susp)):
            idle = self.idle_from(which)
            for n, t in susp.items():
                after = t - idle.get(n, 0.0)
                if not suspend_time - 1.0 <= after <= suspend_time + POWER_SAVE_INTERVAL_S + 2.0:
                    bad.append(
                        f"{which}: {n} suspended {after:.1f} s after its last job (SuspendTime "
                        f"{suspend_time:g} s + the {POWER_SAVE_INTERVAL_S:g} s power-save pass)"
                    )
        return bad

    # -- many-job scenarios: order beyond one scheduler step, every start within one backfill cycle, aggregates --
    def wide_order(self, gap_s: float) -> tuple[int, list[str]]:
        """(pairs checked, pairs in the other order): pairs the simulator starts more than ``gap_s`` apart."""
        pairs, bad = 0, []
        started = [r for r in self.rows if r.real_start_s is not None and r.sim_start_s is not None]
        for a, b in combinations(started, 2):
            ds, dr = b.sim_start_s - a.sim_start_s, b.real_start_s - a.real_start_s  # type: ignore[operator]
            if abs(ds) <= gap_s:
                continue
            pairs += 1
            if ds * dr <= 0:
                bad.append(f"{a.job}/{b.job}")
        return pairs, bad

    def aggregates(self, which: str) -> tuple[float, float]:
        """(utilization, mean wait s): GPU-seconds of the jobs' runs over the cluster's GPUs from the first submit
        to the last end, and the mean of start - submit."""
        runs, waits, last = 0.0, [], 0.0
        for r in self.rows:
            start, end = getattr(r, f"{which}_start_s"), getattr(r, f"{which}_end_s")
            if start is None or end is None:
                continue
            runs += (end - start) * self.gpus_of[r.job]
            waits.append(start - r.submit_s)
            last = max(last, end)
        first = min(r.submit_s for r in self.rows)
        return runs / (self.cluster_gpus * (last - first)), sum(waits) / len(waits)

    def wide_allowed_s(self, row: Row) -> float:
        groups = self.order("sim")
        step = next((i for i, g in enumerate(groups) if row.job in g), 0)
        return self.tolerance_s + LAG_PER_START_S * step

    @property
    def wide_late(self) -> list[Row]:
        return [r for r in self.rows if r.delta_s is not None and abs(r.delta_s) > self.wide_allowed_s(r)]

    @property
    def wide_agrees(self) -> bool:
        (ru, rw), (su, sw) = self.aggregates("real"), self.aggregates("sim")
        return (
            not self.wide_order(self.tolerance_s)[1]
            and not self.wide_late
            and all((r.real_start_s is None) == (r.sim_start_s is None) for r in self.rows)
            and abs(ru - su) <= UTILIZATION_PTS / 100
            and abs(rw - sw) <= MEAN_WAIT_SHARE * rw
        )


def hostnames(hosts: str) -> list[str]:
    """``h100-[0,2]`` / ``h100-[1-2]`` / ``h100-1`` -> node names."""
    prefix, _, rest = hosts.partition("-[")
    if not rest:
        return [hosts] if hosts else []
    out = []
    for part in re.findall(r"\d+(?:-\d+)?", rest):
        first, _, last = part.partition("-")
        out += [f"{prefix}-{i}" for i in range(int(first), int(last or first) + 1)]
    return out


def compare(
    scenario: Scenario,
    real: dict[str, RealOutcome],
    sim: dict[str, Any],
    power_real: list | None = None,
    power_sim: list | None = None,
) -> Comparison:
    rows = []
    for job in scenario.jobs:
        r, s = real[job.id], sim[job.id]
        rows.append(
            Row(
                job.id,
                r.submit_s,
                r.start_s,
                s.start_s,
                r.nodes[0] if r.nodes else "",
                _hostlist(s.nodes[: job.nodes]) if s.starts else "",
                r.preemptions,
                s.preemptions,
                r.eligible_again_s,
                s.starts[1] if len(s.starts) > 1 else None,
                r.end_s if r.preemptions == 0 else None,
                s.end_s if s.preemptions == 0 else None,
            )
        )
    phase_of = {j.id: i for i, p in enumerate(scenario.phases) for j in p.jobs}
    plan = plan_of(scenario)
    return Comparison(
        scenario,
        tuple(rows),
        tolerance_s(scenario),
        phase_of,
        {j.id: j.gpus_per_node * j.nodes for j in scenario.jobs},
        sum(n.replicas * n.gpus for n in plan.nodesets),
        tuple(power_real or ()),
        tuple(power_sim or ()),
    )


def _hostlist(nodes: tuple[str, ...]) -> str:
    """``("h100-0", "h100-1")`` -> ``h100-[0-1]`` (Slurm's spelling, for side-by-side reading)."""
    if len(nodes) <= 1:
        return "".join(nodes)
    prefix = nodes[0].rsplit("-", 1)[0]
    nums = sorted(int(n.rsplit("-", 1)[1]) for n in nodes)
    if nums == list(range(nums[0], nums[-1] + 1)):
        return f"{prefix}-[{nums[0]}-{nums[-1]}]"
    return f"{prefix}-[{','.join(map(str, nums))}]"
