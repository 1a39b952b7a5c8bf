"""Submit a job list to a real cluster (``slurm_cluster.py``) at its submit offsets and record when each job really
started and ended.

A job is ``sleep <run_s>`` wrapped in marks: the batch script appends ``start <epoch> <nodes>`` and ``end <epoch>``
to a file per job (``date +%s.%N``: sub-second, the same clock as the harness's ``time.time()``). A job preempted
with REQUEUE is killed before its ``end`` mark and starts again: one ``start`` line per start. Slurm's own
``StartTime`` has whole seconds only, so the marks are the measurement.
"""

from __future__ import annotations

import calendar
import math
import re
import shlex
import time
from dataclasses import dataclass, field

from tests.support.slurm.cluster import SlurmCluster


@dataclass(frozen=True)
class ScenarioJob:
    """The same fields as the simulator's ``whatif.api.Job`` (so ``Job(**asdict(job))`` converts)."""

    id: str
    submit_s: float
    queue: str
    gpus_per_node: int
    run_s: float
    nodes: int = 1
    time_limit_s: float | None = None
    priority: str | None = None
    pool: str | None = None

    def sbatch_args(self, accounting: bool, gpu_type: str | None = None) -> list[str]:
        """``gpu_type``: ask for ``gpu:<type>:N`` (typed GRES), else ``gpu:N``. Slurm holds a typed cap
        (``GrpTRES=gres/gpu:h100=8``) only to jobs that name the type, an untyped one (``gres/gpu=8``) to every GPU
        job: the rendered caps have both (``stacks/plan/slurm_accounts.py``)."""
        # Slurm keeps time limits in whole minutes (`--time=0:30` becomes 1 min): round up, as Slurm does
        minutes = max(1, math.ceil((self.time_limit_s or self.run_s) / 60))
        gres = f"gpu:{gpu_type}:{self.gpus_per_node}" if gpu_type else f"gpu:{self.gpus_per_node}"
        args = ["-J", self.id, "-N", str(self.nodes), f"--gres={gres}", f"--time={minutes}"]
        if self.pool:
            args += ["-p", self.pool]
        if accounting:
            args += ["-A", self.queue]
        if self.priority:
            args += ["--qos", self.priority]
        return args


@dataclass
class RealOutcome:
    id: str
    submit_s: float
    starts: list[float] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    """Node list of each start (Slurm's hostlist syntax, e.g. ``h100-[0-1]``)."""
    eligible_again_s: float | None = None
    """A job requeued by preemption and left waiting out the requeue delay: when Slurm would let it start again."""

    @property
    def preemptions(self) -> int:
        return len(self.starts) - len(self.ends)

    @property
    def start_s(self) -> float | None:
        return self.starts[0] if self.starts else None

    @property
    def end_s(self) -> float | None:
        return self.ends[-1] if self.ends else None


def _script(job: ScenarioJob, out: str) -> str:
    mark = shlex.quote(f"{out}/{job.id}")
    return (
        f'echo "start $(date +%s.%N) $SLURM_JOB_NODELIST" >> {mark}; sleep {job.run_s}; '
        f'echo "end $(date +%s.%N)" >> {mark}'
    )


@dataclass(frozen=True)
class Phase:
    """Jobs submitted together; ``sim_start_s`` maps the phase's real start onto the simulator's clock (a later
    phase may start after a compressed idle gap, e.g. at the next PriorityCalcPeriod)."""

    sim_start_s: float
    jobs: tuple[ScenarioJob, ...]
    burst: bool = False
    """Submit every job held (``sbatch -H``), then release them all in one ``scontrol release``: they become
    eligible together (their ``submit_s`` must be 0). The phase's clock is shifted so that Slurm's first backfill
    cycle after the release falls on a multiple of ``bf_interval``, where the simulator runs its cycles."""


def _eligible_at(cluster: SlurmCluster, job_id: str) -> float:
    """EligibleTime of a pending job, as epoch seconds (the root has no zoneinfo: its clock reads UTC)."""
    shown = cluster.ctl.run("scontrol", "-o", "show", "job", job_id).stdout
    found = re.search(r"EligibleTime=(\S+)", shown)
    assert found, shown
    return calendar.timegm(time.strptime(found.group(1), "%Y-%m-%dT%H:%M:%S"))


def run_phase(
    cluster: SlurmCluster,
    phase: Phase,
    outcomes: dict[str, RealOutcome],
    timeout_s: float = 60,
    typed_gres: bool = False,
) -> None:
    """Submit every job at its offset in the phase, wait until every job has ended or is waiting out Slurm's
    requeue delay (``Reason=BeginTime`` after a REQUEUE preemption: eligible again ``cred_expire`` + 1 = 121 s
    later); those are cancelled and their EligibleTime recorded. Times are on the simulator's clock."""
    host_out, inside_out = cluster.out_dir
    accounting = cluster.dbd is not None
    ids: dict[str, str] = {}

    def submit(job: ScenarioJob, held: bool) -> None:
        out = cluster.ctl.run(
            "sbatch",
            "--parsable",
            "--chdir=/tmp",
            "-o",
            "/dev/null",
            *(["-H"] if held else []),
            *job.sbatch_args(accounting, _gpu_type(cluster, job) if typed_gres else None),
            "--wrap",
            _script(job, inside_out),
        )
        assert out.returncode == 0, f"sbatch {job.id}: {out.stdout}{out.stderr}"
        ids[out.stdout.strip().split(";")[0]] = job.id

    shift = 0.0
    if phase.burst:
        assert all(j.submit_s == 0 for j in phase.jobs), "a burst's jobs are all submitted at its start"
        for job in phase.jobs:
            submit(job, held=True)
        before = _last_backfill_cycle(cluster)
        t0 = time.time()
        out = cluster.ctl.run("scontrol", "release", ",".join(ids))
        assert out.returncode == 0, f"scontrol release: {out.stdout}{out.stderr}"
        first = _next_backfill_cycle(cluster, before)
        # the simulator's backfill cycles are at multiples of bf_interval: start the burst where Slurm's first
        # cycle after the release (whole seconds: the middle of its second) falls on one
        interval = float(re.search(r"bf_interval=(\d+)", cluster.plan.directives["SchedulerParameters"]).group(1))
        shift = (-(first + 0.5 - t0)) % interval
    else:
        t0 = time.time()
    to_sim = lambda epoch: phase.sim_start_s + shift + (epoch - t0)  # noqa: E731
    cluster.clock = to_sim  # type: ignore[attr-defined]  # epoch -> the simulator's clock (power-saving calls)
    for job in phase.jobs if phase.burst else []:
        outcomes[job.id] = RealOutcome(job.id, to_sim(t0))
    for job in [] if phase.burst else sorted(phase.jobs, key=lambda j: j.submit_s):
        time.sleep(max(0.0, t0 + job.submit_s - phase.sim_start_s - time.time()))
        submitted = to_sim(time.time())
        submit(job, held=False)
        outcomes[job.id] = RealOutcome(job.id, submitted)
    deadline = time.monotonic() + timeout_s
    while True:
        shown = cluster.ctl.run("squeue", "-h", "-o", "%i|%T|%r")
        queued = [line.split("|") for line in shown.stdout.split()]
        # a failed squeue (a busy controller timing out) prints nothing: never read that as "no jobs left"
        if shown.returncode == 0 and all(state == "PENDING" and reason == "BeginTime" for _, state, reason in queued):
            break
        if time.monotonic() > deadline:
            raise AssertionError(
                f"jobs still queued after {timeout_s:.0f} s:\n"
                + cluster.ctl.run("squeue", "-o", "%i %j %T %r %S").stdout
            )
        time.sleep(0.2)
    for slurm_id, _, _ in queued:
        outcomes[ids[slurm_id]].eligible_again_s = to_sim(_eligible_at(cluster, slurm_id))
        cluster.ctl.run("scancel", slurm_id)
    for job in phase.jobs:
        path = host_out / job.id
        for line in path.read_text().splitlines() if path.exists() else []:
            kind, *rest = line.split()
            if kind == "start":
                outcomes[job.id].starts.append(to_sim(float(rest[0])))
                outcomes[job.id].nodes.append(rest[1] if len(rest) > 1 else "")
            else:
                outcomes[job.id].ends.append(to_sim(float(rest[0])))


def _last_backfill_cycle(cluster: SlurmCluster) -> int | None:
    """``sdiag``'s "Last cycle when" of the backfill thread (epoch, whole seconds), None before the first cycle."""
    found = re.search(r"Backfilling stats.*?Last cycle when: [^(\n]*\((\d+)\)", cluster.ctl.run("sdiag").stdout, re.S)
    return int(found.group(1)) if found else None


def _next_backfill_cycle(cluster: SlurmCluster, before: int | None, timeout_s: float = 120) -> int:
    """The epoch second of the first backfill cycle after ``before`` (held jobs alone start no cycle)."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = _last_backfill_cycle(cluster)
        if now is not None and now != before:
            return now
        if time.monotonic() > deadline:
            raise AssertionError(f"no backfill cycle in {timeout_s:.0f} s:\n{cluster.ctl.run('sdiag').stdout}")
        time.sleep(0.1)


def _gpu_type(cluster: SlurmCluster, job: ScenarioJob) -> str:
    return cluster.plan.nodeset(job.pool).gpu_type if job.pool else cluster.plan.gpu_types[0]


def run_phases(
    cluster: SlurmCluster, phases: list[Phase], typed_gres: bool = False, timeout_s: float = 60
) -> dict[str, RealOutcome]:
    """Each phase in turn. Between phases ``scontrol reconfigure`` restarts slurmctld's priority calculation (what
    the decay thread does every PriorityCalcPeriod, 5 min by default): the compressed stand-in for the idle gap."""
    outcomes: dict[str, RealOutcome] = {}
    for i, phase in enumerate(phases):
        if i:
            cluster.reconfigure()
        run_phase(cluster, phase, outcomes, timeout_s=timeout_s, typed_gres=typed_gres)
    return outcomes
