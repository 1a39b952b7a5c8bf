"""A scaling Slurm pool on a real slurmctld 26.05: the rendered power-saving directives make a pending job resume the
pool's nodes (ResumeProgram, nodes POWERING_UP) and an idle node be released (SuspendProgram) after SuspendTime,
never a node of a fixed-size pool (SuspendExcParts).

The Helm values the program registers are loaded as Slinky would (``tests/support/slinky_emulation.py``); the
programs themselves call the Kubernetes API, so recorders stand in for them (``SlurmController.program_calls``).
SuspendTime is compressed from the rendered minutes to 10 s, as the simulator tests compress job times.
"""
from __future__ import annotations

import re
import time

from components.slurm_scaling import cloud_nodes_script
from tests.scheduling.test_slurm_real import _bad_log_lines, _plan_and_values, chroot, slurm_key  # noqa: F401
from tests.support.edit import edits
from tests.support.slurm_configs import GKE_NO_ACCOUNTING
from tests.support.slurm_real import SlurmController

SCALING = edits(GKE_NO_ACCOUNTING, {"nodePools[1].minNodes": 1, "nodePools[1].maxNodes": 4,
                                    "scheduling.slurm.scaling": {"idleMinutes": 15}})
"""h100 6-6 (fixed), l4 1-4 (follows the queue, released after 15 idle minutes)."""


def _until(what: str, ok, ctl: SlurmController, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(1)
    raise AssertionError(f"{what}: not seen in {timeout_s:.0f} s; program calls {ctl.program_calls()}; "
                         f"log ends:\n{ctl.log()[-2000:]}")


def _states(ctl: SlurmController) -> dict[str, str]:
    out = ctl.run("sinfo", "-N", "-h", "-o", "%N %t").stdout.split()
    return dict(zip(out[::2], out[1::2]))


def test_a_pending_job_resumes_the_pools_nodes_and_idle_nodes_are_released(chroot, slurm_key):  # noqa: F811
    plan, values = _plan_and_values(SCALING)
    assert [p for p, _, _ in plan.scaling.pools] == ["l4"]
    conf = values["controller"]["extraConf"]
    for line in ("SuspendTime=900", "ResumeTimeout=1200", "SuspendExcParts=h100", "SuspendExcNodes=l4:1",
                 "ResumeProgram=/usr/local/lib/gpu-cluster/slurm-resume"):
        assert line in conf.splitlines(), line
    assert values["nodesets"]["l4"]["replicas"] == 1 and values["nodesets"]["h100"]["replicas"] == 6
    values["controller"]["extraConf"] = conf.replace("SuspendTime=900", "SuspendTime=10")
    ctl = SlurmController(chroot, values, slurm_key, name="ctld-scaling")
    try:
        assert _bad_log_lines(ctl.log()) == [], "slurmctld logged errors or unexpected warnings at start-up"
        ctl.create_nodes()  # the pods running at deploy (minNodes), then the rendered Job's CLOUD records
        script = cloud_nodes_script(plan.scaling.cloud_nodes(plan.nodesets))
        ctl.run_script("create-nodes.sh", script)
        ctl.run_script("create-nodes.sh", script)  # re-running it changes nothing
        assert ctl.run("sinfo", "-h", "-p", "l4", "-o", "%D").stdout.split() == ["4"]
        # a 2-node job on the l4 partition: accepted (all 4 records exist) and pending until its nodes come up
        out = ctl.run("sbatch", "-p", "l4", "-N", "2", "--wrap", "sleep 600")
        assert out.returncode == 0, out.stdout + out.stderr
        job = re.search(r"(\d+)", out.stdout).group(1)
        _until("ResumeProgram for the job's two l4 nodes", lambda: any(
            c.startswith("slurm-resume l4-[") for c in ctl.program_calls()), ctl)
        resumed = next(c for c in ctl.program_calls() if c.startswith("slurm-resume")).split()[1]
        nodes = ctl.run("scontrol", "show", "hostnames", resumed).stdout.split()
        assert len(nodes) == 2 and all(n.startswith("l4-") for n in nodes)
        states = _states(ctl)
        assert all(states[n].endswith("#") for n in nodes), states  # POWERING_UP, the job CONFIGURING on them
        assert ctl.run("squeue", "-h", "-j", job, "-o", "%T").stdout.strip() == "CONFIGURING"
        # the two l4 nodes the job does not use are released after SuspendTime; no h100 node ever is
        _until("SuspendProgram for the idle l4 nodes", lambda: any(
            c.startswith("slurm-suspend") for c in ctl.program_calls()), ctl)
        suspended = [n for c in ctl.program_calls() if c.startswith("slurm-suspend")
                     for n in ctl.run("scontrol", "show", "hostnames", c.split()[1]).stdout.split()]
        assert suspended and set(suspended) <= {f"l4-{i}" for i in range(4)} - set(nodes), suspended
        assert not any("h100" in c for c in ctl.program_calls())
        assert _bad_log_lines(ctl.log()) == []
    finally:
        ctl.stop()
