"""A pool that follows the queue and uses Slurm blocks, on a real Slurm 26.05 controller: its powered-down records are
created by the rendered Job, and Slinky sets a node's ``Topology=`` only once its pod runs on a Kubernetes node that
carries the topology annotation. When some of the pool's nodes are in the block and others in none, slurmctld
refuses a multi-node job outright; the rendered records of a one-block pool are created in the block, so the job
is accepted whether or not the nodes that already run were annotated.
"""

from __future__ import annotations

import re
import secrets
import time

import pytest

from components.slurm.scaling import cloud_nodes_script
from tests.render.test_slurm_real import _plan_and_values
from tests.support.slurm.cluster import SlurmCluster
from tests.support.slurm.real import SlurmController
from tests.support.slurm.root import Chroot, ensure_root
from tests.support.spec.edit import edits
from tests.support.spec.stack_configs import GKE

POOL, NODES = "h100", 4
CONFIG = edits(
    GKE,
    {
        "nodePools": [
            {
                "name": POOL,
                "machineType": "a3-highgpu-8g",
                "zones": ["us-central1-a"],
                "minNodes": 0,
                "maxNodes": NODES,
                "multiNode": True,
            },
        ],
        "scheduling": {
            "workload": "slurm",
            "queues": [{"name": "team", "quotas": [{"pool": POOL, "gpus": 8 * NODES}]}],
            "topology": {"mode": "required", "level": "block"},
            "slurm": {"accounting": False, "blockSize": NODES, "priorityWeights": {"fairShare": 0, "age": 0}},
        },
    },
)
"""One pool of one 4-node block, 0 nodes at deploy: every node starts as a powered-down record."""
REFUSED = "Requested node configuration is not available"


@pytest.fixture(scope="module")
def chroot():
    c = Chroot(ensure_root())
    yield c
    c.close()


def _after_one_resume(chroot: Chroot, values: dict, name: str, records: list[str]) -> SlurmController:
    """The rendered records, then node 0's pod running on a node annotated with the pool's one block (the operator
    copies the annotation into ``Topology=``); nodes 1-3 are still powered down."""
    ctl = SlurmController(chroot, values, secrets.token_bytes(1024), name=name)
    ctl.run_script("create-nodes.sh", cloud_nodes_script([records]))
    out = ctl.run("scontrol", "update", f"NodeName={POOL}-0", f"Topology={POOL}:{POOL}-b0")
    assert out.returncode == 0, out.stdout + out.stderr
    return ctl


def _sbatch(ctl: SlurmController, nodes: int):
    return ctl.run("sbatch", "--parsable", "-p", POOL, "-N", str(nodes), "--wrap", "sleep 600")


def test_a_power_saving_pool_of_one_block_accepts_a_whole_block_job_once_some_nodes_are_annotated(chroot):
    plan, values = _plan_and_values(CONFIG)
    (records,) = plan.scaling.cloud_nodes(plan.nodesets)
    assert f"Topology={POOL}:{POOL}-b0" in records and records[-1] == "State=CLOUD"

    ctl = _after_one_resume(chroot, values, "ctld-records-in-block", records)
    try:
        shown = ctl.run("scontrol", "show", "topology", POOL).stdout
        assert re.search(rf"BlockName={POOL}-b0 .*Nodes={POOL}-\[0-3\]", shown), shown
        for n in (NODES, 2):
            out = _sbatch(ctl, n)
            assert out.returncode == 0, out.stdout + out.stderr  # accepted: pends until its nodes are resumed
    finally:
        ctl.stop()

    # the records as they were rendered before (no Topology=): node 0 in the block, 1-3 in none
    bare = [a for a in records if not a.startswith("Topology=")]
    ctl = _after_one_resume(chroot, values, "ctld-records-no-block", bare)
    try:
        out = _sbatch(ctl, NODES)
        assert out.returncode != 0 and REFUSED in out.stderr, out.stdout + out.stderr
    finally:
        ctl.stop()


def test_a_resumed_records_slurmd_keeps_the_block_when_its_node_is_not_annotated(chroot):
    """A real slurmd registering as a dynamic node without ``Topology=`` (its Kubernetes node not annotated) into a
    record created in the block: the node stays in the block, so the resumed job runs on the block."""
    plan, _ = _plan_and_values(CONFIG)
    cluster = SlurmCluster(chroot, plan, "resume-in-block", secrets.token_bytes(1024))
    try:
        ctl = cluster.ctl
        assert all("Topology=" not in n.conf for n in cluster.spare)  # the pods' slurmd --conf names no block
        out = _sbatch(ctl, NODES)
        assert out.returncode == 0, out.stdout + out.stderr
        deadline = time.monotonic() + 60
        while not any(c.startswith(f"slurm-resume {POOL}-[0-3]") for c in ctl.program_calls()):
            assert time.monotonic() < deadline, ctl.program_calls()
            time.sleep(0.5)
        cluster.start_node(f"{POOL}-0")
        deadline = time.monotonic() + 60
        while "SlurmdStartTime=None" in (shown := ctl.run("scontrol", "show", "node", f"{POOL}-0").stdout):
            assert time.monotonic() < deadline, shown
            time.sleep(0.5)
        assert f"Topology={POOL}:{POOL}-b0" in shown, shown
        topology = ctl.run("scontrol", "show", "topology", POOL).stdout
        assert re.search(rf"BlockName={POOL}-b0 .*Nodes={POOL}-\[0-3\]", topology), topology
    finally:
        cluster.stop()
