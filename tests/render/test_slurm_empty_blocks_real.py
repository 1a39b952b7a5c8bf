"""What a real Slurm 26.05 controller does with the rendered block topology before and after the nodes carry the
Slinky topology annotation: before, the pool's partition (``Topology=<pool>``) still runs jobs, placed as if flat;
after, with the value validation prints (``<topology>:<block>``), a job of one block lands on that block's nodes.

The Slinky operator copies each Kubernetes node's ``topology.slinky.slurm.net/spec`` into the Slurm node's
``Topology=``; here the node records are created with it, as the operator would.
"""

from __future__ import annotations

import re
import secrets
import time

import pytest
import yaml

from components.charts import SLURM
from preview.engine import run_program
from stacks.plan.slurm_topology import annotation_value
from tests.conftest import require_shared
from tests.support.helm.values import helm_merge
from tests.support.preview.recorded import one
from tests.support.slurm.real import SlurmController
from tests.support.slurm.root import Chroot, ensure_root
from tests.support.spec.edit import edits
from tests.support.spec.stack_configs import GKE

POOL, NODES, BLOCK = "h100", 4, 2
CONFIG = edits(
    GKE,
    {
        "nodePools": [
            {
                "name": POOL,
                "machineType": "a3-highgpu-8g",
                "zones": ["us-central1-a"],
                "minNodes": NODES,
                "maxNodes": NODES,
                "multiNode": True,
            },
        ],
        "scheduling": {
            "workload": "slurm",
            "queues": [{"name": "team", "quotas": [{"pool": POOL, "gpus": 8 * NODES}]}],
            "topology": {"mode": "required", "level": "block"},
            "slurm": {"accounting": False, "blockSize": BLOCK, "priorityWeights": {"fairShare": 0, "age": 0}},
        },
    },
)


@pytest.fixture(scope="module")
def chroot():
    c = Chroot(ensure_root())
    yield c
    c.close()


def _values() -> dict:
    release = one(run_program(CONFIG), "kubernetes:helm.sh/v3:Release", "slurm-slurm")
    defaults = yaml.safe_load(require_shared("schemas", SLURM.default_values).read_text())
    return helm_merge(defaults, release.redacted_inputs["values"])


def _job(ctl: SlurmController, partition: str, nodes: int) -> str:
    out = ctl.run("sbatch", "--parsable", "-p", partition, "-N", str(nodes), "--wrap", "sleep 600")
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().split(";")[0]


def _scheduled(ctl: SlurmController, job: str, timeout_s: float = 90) -> tuple[str, str]:
    """(state, node list) once the job leaves PENDING, or ("PENDING", reason) after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        state, nodes, reason = ctl.run("squeue", "-h", "-j", job, "-o", "%T|%N|%r").stdout.strip().split("|")
        if state != "PENDING" or time.monotonic() > deadline:
            return (state, nodes) if state != "PENDING" else (state, reason)
        time.sleep(1)


def _start(chroot: Chroot, values: dict, name: str, topology: list[str | None]) -> SlurmController:
    """A controller whose NodeSet pods registered with ``Topology=topology[i]`` (None: the node is not annotated)."""
    ctl = SlurmController(chroot, values, secrets.token_bytes(1024), name=name)
    extra = values["nodesets"][POOL]["extraConf"].split(" ")
    for i, topo in enumerate(topology):
        out = ctl.run(
            "scontrol",
            "create",
            f"NodeName={POOL}-{i}",
            f"Features={POOL}",
            *extra,
            *([f"Topology={topo}"] if topo else []),
            "State=CLOUD",
        )
        assert out.returncode == 0, out.stderr
    return ctl


def test_a_block_partition_runs_jobs_unplaced_until_nodes_carry_the_annotation_then_packs_them_by_block(chroot):
    """Slurm 26.05 does not hold a block partition's job when no node is in a block: it allocates the lowest nodes
    as if flat. With the annotation value validation prints (``<topology>:<block>``) a job of one block lands on
    that block's nodes, here deliberately not the lowest ones."""
    values = _values()
    topo = yaml.safe_load(values["configFiles"]["topology.yaml"])
    (block_topo,) = [t for t in topo if "block" in t]
    blocks = [b["block"] for b in block_topo["block"]["blocks"]]
    assert blocks == [f"{POOL}-b0", f"{POOL}-b1"] and block_topo["topology"] == POOL

    ctl = _start(chroot, values, "ctld-empty-blocks", [None] * NODES)
    try:
        parts = ctl.run("scontrol", "-o", "show", "partition").stdout
        assert re.search(rf"PartitionName={POOL} .*Topology={POOL}\b", parts), parts
        first, second = _job(ctl, POOL, BLOCK), _job(ctl, POOL, BLOCK)
        assert _scheduled(ctl, first)[1] == f"{POOL}-[0-1]"  # the lowest nodes: no block placement
        assert _scheduled(ctl, second)[1] == f"{POOL}-[2-3]"
    finally:
        ctl.stop()

    # blocks interleaved on purpose: b0 = nodes 0 and 2, b1 = nodes 1 and 3
    ctl = _start(
        chroot,
        values,
        "ctld-annotated-blocks",
        [annotation_value(block_topo["topology"], blocks[i % 2]) for i in range(NODES)],
    )
    try:
        shown = ctl.run("scontrol", "show", "topology", POOL).stdout
        assert re.search(rf"BlockName={POOL}-b0 .*Nodes={POOL}-\[0,2\]", shown), shown
        job = _job(ctl, POOL, BLOCK)
        assert _scheduled(ctl, job)[1] in (f"{POOL}-[0,2]", f"{POOL}-[1,3]")
    finally:
        ctl.stop()
