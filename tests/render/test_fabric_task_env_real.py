"""The fabric env reaches every Slurm task, proven with REAL slurmctld + slurmd 26.05 (``tests/support/
slurm/cluster.py``): the flagship ``gke-h100-512`` stack (GPUDirect-TCPXO NodeSet ``h100-mega`` + the plain L4
NodeSet ``l4-eval``), shrunk to 2 + 1 nodes, rendered with its fabrics as the program renders them; the NodeSets'
``slurm-task-env`` volume is projected and mounted per slurmd as kubelet would.

A job submitted from the controller (no NCCL variable in the submitter's environment, as from a login pod) runs
``srun env`` on each NodeSet: the TCPXO task shows every NCCL variable of the fabric and ``LD_LIBRARY_PATH`` with the
plugin's directory first; the L4 task shows none of them. Without the TaskProlog (today's rendering before this
change) the TCPXO task had none either. Root with CAP_SYS_ADMIN/SYS_CHROOT/NET_ADMIN is needed: skip outside CI
without it, failure in CI.
"""

from __future__ import annotations

import time

import pytest

from preview.engine import PROJECT_ROOT, read_stack_file
from render.fabric_pod import pod_fabric
from render.nccl_env import NVIDIA_LIB64
from stacks.plan.slurm import plan_slurm
from tests.support.spec.edit import edits
from tests.support.spec.scheduling_fixtures import spec_and_facts
from tests.support.slurm.cluster import SlurmCluster
from tests.support.slurm.session import real_slurm

STACK = "gke-h100-512"
FABRIC_POOL, PLAIN_POOL = "h100-mega", "l4-eval"


def _raw() -> dict:
    flat = read_stack_file(PROJECT_ROOT / f"Pulumi.{STACK}.yaml")
    raw = {k.split(":", 1)[1]: v for k, v in flat.items() if k.startswith("gpu-cluster:")}
    pools = raw["nodePools"]
    pools[0].update(minNodes=2, maxNodes=2)  # 2 real slurmd daemons stand for the 64 nodes
    pools[0]["upgrade"] = {"maxSurge": 0, "maxUnavailable": 1}
    pools[1].update(minNodes=1, maxNodes=1)
    raw["scheduling"]["slurm"]["blockSize"] = 2
    raw["scheduling"]["queues"] = [
        {"name": "pretraining", "fairShareWeight": 3, "quotas": [{"pool": FABRIC_POOL, "gpus": 16}]},
        {"name": "research", "quotas": [{"pool": PLAIN_POOL, "gpus": 2}]},
    ]
    return edits(raw, {})


@pytest.fixture(scope="module")
def task_envs() -> dict[str, dict[str, str]]:
    spec, facts = spec_and_facts(_raw())
    assert spec.scheduling is not None
    plan = plan_slurm(spec.scheduling, facts)
    fabrics = {p.name: pod_fabric(p) for p in facts}
    with real_slurm("dbd-fabric" if plan.accounting else None) as real:
        cluster = None
        try:
            cluster = SlurmCluster(real.chroot, plan, "fabric-env", real.key, real.dbd, fabrics=fabrics)
            out_host, out_inside = cluster.out_dir
            envs = {}
            for pool, account in ((FABRIC_POOL, "pretraining"), (PLAIN_POOL, "research")):
                args = [
                    "sbatch",
                    "--parsable",
                    "-p",
                    pool,
                    "-N",
                    "1",
                    f"--output={out_inside}/{pool}.out",
                    "--wrap",
                    "srun env",
                ]
                if plan.accounting:
                    args[2:2] = ["-A", account]
                sub = cluster.ctl.run(*args)  # the controller's environment: no NCCL_* (as from a login pod)
                assert sub.returncode == 0, sub.stdout + sub.stderr
                envs[pool] = _wait_output(cluster, out_host / f"{pool}.out", sub.stdout.strip())
            envs["_log_problems"] = {str(i): line for i, line in enumerate(cluster.log_problems())}
            return envs
        finally:
            if cluster is not None:
                cluster.stop()


def _wait_output(cluster: SlurmCluster, path, job: str) -> dict[str, str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = cluster.ctl.run("squeue", "-h", "-j", job, "-o", "%T").stdout.strip()
        if not state and path.exists():
            return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
        time.sleep(0.3)
    raise AssertionError(f"job {job} did not finish: {cluster.ctl.run('scontrol', 'show', 'job', job).stdout}")


def _fabric_env() -> dict[str, str]:
    spec, facts = spec_and_facts(_raw())
    fabric = pod_fabric(next(p for p in facts if p.name == FABRIC_POOL))
    assert fabric is not None
    return fabric.env


def test_a_task_on_the_tcpxo_nodeset_gets_every_fabric_variable(task_envs):
    env = task_envs[FABRIC_POOL]
    want = {k: v for k, v in _fabric_env().items() if k != "LD_LIBRARY_PATH"}
    assert len(want) >= 20  # the FasTrak env, not a stray variable or two
    assert {k: env.get(k) for k in want} == want
    assert env["LD_LIBRARY_PATH"].split(":")[0] == NVIDIA_LIB64


def test_a_task_on_the_plain_nodeset_gets_none_of_them(task_envs):
    env = task_envs[PLAIN_POOL]
    assert env.get("SLURM_JOB_PARTITION") == PLAIN_POOL  # the task really ran and printed its env
    leaked = sorted(k for k in _fabric_env() if k in env and k != "LD_LIBRARY_PATH")
    assert leaked == []
    assert NVIDIA_LIB64 not in env.get("LD_LIBRARY_PATH", "").split(":")


def test_the_daemons_log_no_errors(task_envs):
    assert task_envs["_log_problems"] == {}
