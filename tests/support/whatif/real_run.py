"""One comparison scenario (``scenarios.py``) on a real cluster of slurmctld + slurmd (+ slurmdbd): the job outcomes,
the power-saving calls slurmctld made (scaling pools: the rendered Resume/SuspendProgram against a stand-in API
server, with ``tests/support/slurm/nodeset_operator.py`` turning ``replicas`` into slurmd processes), and the
daemons' unexpected log lines. Cleanup is left to the caller (``cleanup``, run last-in first-out), so that every
cluster of a test module can stay up until all are done (see ``tests/whatif/slurm/test_whatif_real_slurm.py``)."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from stacks.plan.slurm_scaling import NODESET_PREFIX
from tests.support.kube.fake_api import NAMESPACE, FakeKubeApi, make_pki, programs_for, service_account
from tests.support.slurm.cluster import SlurmCluster
from tests.support.slurm.jobs import RealOutcome, run_phases
from tests.support.slurm.nodeset_operator import NodeSetOperator
from tests.support.slurm.real import SlurmDbd
from tests.support.slurm.root import Chroot
from tests.support.whatif.compare import plan_of
from tests.support.whatif.scenarios import Scenario


@dataclass
class RealRun:
    outcomes: dict[str, RealOutcome]
    power: list[tuple[float, str, str]]
    """(time on the simulator's clock, "resume" | "suspend", node) of every Resume/SuspendProgram call."""
    problems: list[str]
    """Unexpected error/warning lines of the daemons, and errors of the stand-ins."""


def run_real(
    chroot: Chroot, key: bytes, dbd: SlurmDbd, scenario: Scenario, cleanup: list[Callable[[], object]]
) -> RealRun:
    plan = plan_of(scenario)
    programs, api, operator = None, None, None
    if scenario.boot_s is not None:
        pki = Path(tempfile.mkdtemp(prefix="whatif-pki-"))
        cleanup.append(lambda: shutil.rmtree(pki, ignore_errors=True))
        make_pki(pki, "kubernetes.default.svc")
        api = FakeKubeApi(
            pki, NAMESPACE, {f"{NODESET_PREFIX}{p}": lo for p, lo, _ in plan.scaling.pools}, netns=chroot.netns
        )
        cleanup.append(api.stop)
        sa = service_account(chroot, api, f"sa-{scenario.name}")
        cleanup.append(sa.remove)
        programs = programs_for(plan.scaling, api, sa.inside)
    cluster = SlurmCluster(chroot, plan, scenario.name, key, dbd if plan.accounting else None, programs=programs)
    cleanup.append(cluster.stop)
    if api is not None:
        operator = NodeSetOperator(cluster, api, scenario.boot_s or 0.0)
        cleanup.append(operator.stop)
    outcomes = run_phases(cluster, list(scenario.phases), typed_gres=scenario.typed_gres, timeout_s=scenario.timeout_s)
    power: list[tuple[float, str, str]] = []
    problems: list[str] = []
    if operator is not None and api is not None:
        time.sleep(scenario.settle_s)  # SuspendTime passes on the idle nodes
        for call in cluster.ctl.program_calls():
            program, hosts, epoch = call.split()
            kind = "resume" if program == "slurm-resume" else "suspend"
            for node in cluster.ctl.run("scontrol", "show", "hostnames", hosts).stdout.split():
                power.append((cluster.clock(float(epoch)), kind, node))  # type: ignore[attr-defined]
        exits = cluster.ctl.program_exits()
        problems += [f"program exit: {e}" for e in exits if not e.endswith(" 0")]
        problems += [f"operator: {e}" for e in operator.errors] + [f"API: {e}" for e in api.errors]
    problems += cluster.log_problems()
    return RealRun(outcomes, power, problems)
