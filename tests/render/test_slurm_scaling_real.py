"""A scaling Slurm pool on a real slurmctld 26.05: the rendered power-saving directives make a pending job resume the
pool's nodes (ResumeProgram, nodes POWERING_UP) and an idle node be released (SuspendProgram) after SuspendTime,
never a node of a fixed-size pool (SuspendExcParts).

The Helm values the program registers are loaded as Slinky would (``tests/support/slurm/slinky_emulation.py``). slurmctld
runs the rendered programs themselves, pointed at a stand-in Kubernetes API server (``tests/support/kube/fake_api.py``;
only the address and the service-account directory are swapped): each call is recorded
(``SlurmController.program_calls``), each must exit 0, and the NodeSet's replicas must follow. SuspendTime is
compressed from the rendered minutes to 10 s, as the simulator tests compress job times.
"""

from __future__ import annotations

import re
import time

from components.slurm.scaling import cloud_nodes_script
from tests.render.test_slurm_real import _bad_log_lines, _plan_and_values, chroot, slurm_key  # noqa: F401
from tests.support.spec.edit import edits
from tests.support.slurm.configs import GKE_NO_ACCOUNTING
from tests.support.kube.fake_api import L4, NAMESPACE, FakeKubeApi, make_pki, programs_for, service_account
from tests.support.slurm.real import START_TIMEOUT_S, SlurmController, Workdir
from tests.support.slurm.root import Chroot

SCALING = edits(
    GKE_NO_ACCOUNTING,
    {"nodePools[1].minNodes": 1, "nodePools[1].maxNodes": 4, "scheduling.slurm.scaling": {"idleMinutes": 15}},
)
"""h100 6-6 (fixed), l4 1-4 (follows the queue, released after 15 idle minutes)."""


def _until(what: str, ok, ctl: SlurmController, timeout_s: float = START_TIMEOUT_S) -> None:
    """Poll for a condition; the deadline is generous (a loaded machine stretches slurmctld's power-saving pass)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(0.5)  # the polling interval
    raise AssertionError(
        f"{what}: not seen in {timeout_s:.0f} s; program calls {ctl.program_calls()}; log ends:\n{ctl.log()[-2000:]}"
    )


def _states(ctl: SlurmController) -> dict[str, str]:
    out = ctl.run("sinfo", "-N", "-h", "-o", "%N %t").stdout.split()
    return dict(zip(out[::2], out[1::2]))


def test_a_pending_job_resumes_the_pools_nodes_and_idle_nodes_are_released(chroot, slurm_key, tmp_path):  # noqa: F811
    make_pki(tmp_path / "pki", "kubernetes.default.svc")
    api = FakeKubeApi(tmp_path / "pki", NAMESPACE, {L4: 1}, netns=chroot.netns)
    sa = service_account(chroot, api, "kube-sa-scaling")
    try:
        _resume_and_release(chroot, slurm_key, api, sa)
    finally:
        sa.remove()
        api.stop()


def _resume_and_release(chroot: Chroot, slurm_key: bytes, api: FakeKubeApi, sa: Workdir) -> None:  # noqa: F811
    plan, values = _plan_and_values(SCALING)
    assert [p for p, _, _ in plan.scaling.pools] == ["l4"]
    conf = values["controller"]["extraConf"]
    for line in (
        "SuspendTime=900",
        "ResumeTimeout=1200",
        "SuspendExcParts=h100",
        "SuspendExcNodes=l4:1",
        "ResumeProgram=/usr/local/lib/gpu-cluster/slurm-resume",
    ):
        assert line in conf.splitlines(), line
    assert values["nodesets"]["l4"]["replicas"] == 1 and values["nodesets"]["h100"]["replicas"] == 6
    values["controller"]["extraConf"] = conf.replace("SuspendTime=900", "SuspendTime=10")
    ctl = SlurmController(
        chroot, values, slurm_key, name="ctld-scaling", programs=programs_for(plan.scaling, api, sa.inside)
    )
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
        _until(
            "ResumeProgram for the job's two l4 nodes",
            lambda: any(c.startswith("slurm-resume l4-[") for c in ctl.program_calls()),
            ctl,
        )
        resumed = next(c for c in ctl.program_calls() if c.startswith("slurm-resume")).split()[1]
        nodes = ctl.run("scontrol", "show", "hostnames", resumed).stdout.split()
        assert len(nodes) == 2 and all(n.startswith("l4-") for n in nodes)
        states = _states(ctl)
        assert all(states[n].endswith("#") for n in nodes), states  # POWERING_UP, the job CONFIGURING on them
        assert ctl.run("squeue", "-h", "-j", job, "-o", "%T").stdout.strip() == "CONFIGURING"
        # the real ResumeProgram raised the NodeSet's replicas so each resumed node gets a pod
        top = max(int(n.rsplit("-", 1)[1]) for n in nodes) + 1
        _until("ResumeProgram's exit", lambda: ctl.program_exits()[:1] == ["slurm-resume 0"], ctl)
        assert api.replicas[L4] == top, (api.calls, api.errors)
        # the two l4 nodes the job does not use are released after SuspendTime; no h100 node ever is
        _until(
            "SuspendProgram for the idle l4 nodes",
            lambda: any(c.startswith("slurm-suspend") for c in ctl.program_calls()),
            ctl,
        )
        suspended = [
            n
            for c in ctl.program_calls()
            if c.startswith("slurm-suspend")
            for n in ctl.run("scontrol", "show", "hostnames", c.split()[1]).stdout.split()
        ]
        assert suspended and set(suspended) <= {f"l4-{i}" for i in range(4)} - set(nodes), suspended
        assert not any("h100" in c for c in ctl.program_calls())
        # the real SuspendProgram kept replicas at the highest ordinal still in use (the job's), not below minNodes
        _until("SuspendProgram's exit", lambda: any(e.startswith("slurm-suspend") for e in ctl.program_exits()), ctl)
        assert set(ctl.program_exits()) == {"slurm-resume 0", "slurm-suspend 0"}, ctl.program_exits()
        assert [c for c in api.calls if c[0] == "PATCH"][-1][2] == f'{{"spec":{{"replicas":{top}}}}}'
        assert api.replicas[L4] == top and api.errors == [] and all("/h100" not in c[1] for c in api.calls)
        assert _bad_log_lines(ctl.log()) == []
    finally:
        ctl.stop()
