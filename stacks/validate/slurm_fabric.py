"""The slurmd image of a multi-node EFA pool in a ``workload: slurm`` stack (tasks run in slurmd's container)."""

from __future__ import annotations

from catalog import Cloud
from catalog.fabric import FabricKind, load_fabric_catalog
from stacks.plan.fabric import fabric_mode
from stacks.spec.fabric import FabricMode
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues


def check_efa_slurmd_image(issues: Issues, pools: list[tuple[int, NodePool]]) -> None:
    """Slurm tasks run in slurmd's container, and Slinky's default slurmd image has no libfabric/aws-ofi-nccl: a
    multi-node EFA pool left on it would run NCCL over TCP. gpu-cluster cannot default an image that must be built
    and pushed to the user's registry, so the stack names one (or turns the fabric off) before anything is created."""
    fab = load_fabric_catalog()
    for i, pool in pools:
        machine = fab.for_machine(Cloud.AWS, pool.machine_type)
        if not pool.multi_node or machine is None or machine.kind != FabricKind.EFA:
            continue
        if fabric_mode(pool.fabric) == FabricMode.OFF or (pool.fabric and pool.fabric.runtime_image):
            continue
        issues.pool(i, pool.name).at("fabric").error(
            "runtimeImage",
            "a multi-node EFA pool of a workload: slurm stack needs a slurmd image with libfabric's "
            "EFA provider and aws-ofi-nccl (Slinky's default slurmd image has neither, so NCCL would use TCP)",
            None,
            allowed="a slurmd image built from images/slurmd-efa, named by digest",
            fix="build and push images/slurmd-efa (docs/fabric.md), then set fabric.runtimeImageBuild: slurmd-efa "
            "and fabric.runtimeImage: <registry>/<repo>@sha256:<digest>; or set fabric.mode: off (NCCL over "
            "the primary NIC) or multiNode: false",
        )
