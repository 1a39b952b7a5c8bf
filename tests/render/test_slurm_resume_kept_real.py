"""A kept node resumed on a real slurmctld + slurmd 26.05 (docs/slurm.md, docs/contributing/whatif-validation.md finding
11).

A pool that follows the queue releases its nodes out of order: when a lower ordinal goes idle while a higher one
runs a job, SuspendProgram cannot lower the NodeSet's replicas past it, so that node's pod (and slurmd) stays while
Slurm counts the node powered down. When Slurm resumes it, the rendered ResumeProgram restarts the pod, which comes
back on the same Kubernetes node: the machine did not reboot. slurmctld completes a resume only for a node whose
reported boot is later than the resume request, so the pool's slurmd must report its own start as the boot (the
rendered NodeSet's ``slurmd.args``); without it the node stays POWERING_UP and the job CONFIGURING until
ResumeTimeout (20 min as rendered).

Real slurmctld runs the rendered programs against the stand-in API server; the stand-in operator
(``tests/support/slurm/nodeset_operator.py``) starts a new pod's slurmd with a fresh boot and restarts a deleted
pod's slurmd on the same machine (the host's boot time), with the NodeSet's rendered slurmd arguments.
SuspendTime is compressed to 10 s and SuspendTimeout to 5 s. Needs root with network namespaces: skip outside CI without them.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

from stacks.plan.slurm_scaling import NODESET_PREFIX, SLURMD_BOOT_ARGS
from tests.support.kube.fake_api import NAMESPACE, FakeKubeApi, make_pki, programs_for, service_account
from tests.support.slurm.cluster import SlurmCluster
from tests.support.slurm.nodeset_operator import NodeSetOperator
from tests.support.slurm.root import Chroot, ensure_root
from tests.support.whatif.compare import plan_of
from tests.support.whatif.scenarios import POWER

REGISTERED_WITHIN_S = 75.0
"""Resume → pod restart → registration → slurmctld's next periodic job pass (30 s) starts the job: well under the
rendered ResumeTimeout (1200 s); a node waiting for a boot never gets there."""


@pytest.fixture(scope="module")
def chroot() -> Iterator[Chroot]:
    c = Chroot(ensure_root())  # skips (fails under CI=true) without the network-namespace privilege
    yield c
    c.close()


def _until(what: str, ok, cluster: SlurmCluster, timeout_s: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if ok():
            return time.monotonic() - start
        time.sleep(0.5)
    nodes = cluster.ctl.run("sinfo", "-N", "-h", "-o", "%N %T").stdout
    raise AssertionError(
        f"{what}: not within {timeout_s:.0f} s; nodes:\n{nodes}program calls {cluster.ctl.program_calls()}"
    )


def _submit(cluster: SlurmCluster, node: str, seconds: int) -> str:
    out = cluster.ctl.run(
        "sbatch",
        "--chdir=/tmp",
        "-o",
        "/dev/null",
        "-w",
        node,
        "-N",
        "1",
        "--gres=gpu:1",
        "--time=20",
        "--wrap",
        f"sleep {seconds}",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return re.search(r"(\d+)", out.stdout).group(1)


def _job_state(cluster: SlurmCluster, job: str) -> str:
    return cluster.ctl.run("squeue", "-h", "-j", job, "-o", "%T").stdout.strip()


def test_the_rendered_nodeset_reports_its_slurmd_start_as_boot_only_on_pools_that_follow_the_queue():
    plan = plan_of(POWER)
    from render.slurm_values import slurm_values

    values = slurm_values(plan, "c")
    assert [p for p, _, _ in plan.scaling.pools] == ["h100"]
    assert values["nodesets"]["h100"]["slurmd"]["args"] == list(SLURMD_BOOT_ARGS) == ["-b"]
    fixed = dataclasses.replace(plan, nodesets=[dataclasses.replace(n, scales=False) for n in plan.nodesets])
    assert "args" not in slurm_values(fixed, "c")["nodesets"]["h100"]["slurmd"]


def test_a_kept_node_resumed_by_the_rendered_program_registers_and_runs_its_job(chroot):
    plan = plan_of(POWER)  # h100, 1-3 nodes, following the queue
    assert plan.directives["SuspendTime"] == "60"
    plan.directives["SuspendTime"] = "10"  # compressed (the rendered value is idleMinutes x 60)
    plan.directives["SuspendTimeout"] = "5"  # compressed (rendered 300): a node is POWERING_DOWN until then
    pki = Path(tempfile.mkdtemp(prefix="resume-kept-pki-"))
    make_pki(pki, "kubernetes.default.svc")
    api = FakeKubeApi(pki, NAMESPACE, {f"{NODESET_PREFIX}h100": 1}, netns=chroot.netns)
    sa = service_account(chroot, api, "sa-resume-kept")
    cluster = operator = None
    try:
        cluster = SlurmCluster(
            chroot, plan, "resume-kept", secrets.token_bytes(1024), programs=programs_for(plan.scaling, api, sa.inside)
        )
        assert "SuspendTime=10" in cluster.values["controller"]["extraConf"].splitlines()
        operator = NodeSetOperator(cluster, api, boot_s=2.0)
        # h100-1 for a short job, h100-2 for a long one: both resumed, replicas 3 (fresh pods, fresh boots)
        short, long_ = _submit(cluster, "h100-1", 3), _submit(cluster, "h100-2", 900)
        _until("both jobs running on resumed nodes", lambda: _job_state(cluster, long_) == "RUNNING", cluster, 120)
        _until("the short job done", lambda: _job_state(cluster, short) == "", cluster, 60)
        # h100-1 idle for SuspendTime: suspended, but h100-2 runs, so replicas stay 3 and h100-1's pod is kept
        _until(
            "SuspendProgram for h100-1",
            lambda: any(c.startswith("slurm-suspend h100-1 ") for c in cluster.ctl.program_calls()),
            cluster,
            90,
        )
        _until(
            "h100-1 powered down",
            lambda: "POWERED_DOWN" in cluster.ctl.run("scontrol", "show", "node", "h100-1").stdout,
            cluster,
            60,
        )
        assert api.replicas[f"{NODESET_PREFIX}h100"] == 3, api.calls
        assert "h100-1" in cluster.slurmd and cluster.slurmd["h100-1"].poll() is None, "the kept pod's slurmd runs"
        # a job for h100-1: Slurm resumes it, the rendered ResumeProgram restarts the kept pod (same machine)
        job = _submit(cluster, "h100-1", 900)
        _until(
            "ResumeProgram restarting h100-1's pod",
            lambda: any(e[1:] == ("restart", "h100-1") for e in operator.events),
            cluster,
            60,
        )
        took = _until(
            "the job on the resumed kept node running",
            lambda: _job_state(cluster, job) == "RUNNING",
            cluster,
            REGISTERED_WITHIN_S,
        )
        node = cluster.ctl.run("scontrol", "show", "node", "h100-1").stdout
        assert "POWERING_UP" not in node and "NOT_RESPONDING" not in node, node
        assert operator.errors == [] and api.errors == []
        assert set(cluster.ctl.program_exits()) <= {"slurm-resume 0", "slurm-suspend 0"}, cluster.ctl.program_exits()
        print(f"kept node registered and its job started {took:.1f} s after the pod restart was seen")
    finally:
        if operator is not None:
            operator.stop()
        if cluster is not None:
            cluster.stop()
        sa.remove()
        api.stop()
        shutil.rmtree(pki, ignore_errors=True)
