"""Slurm blocks that hold on Kubernetes: Slinky puts a slurmd node in a block only from its Kubernetes node's
annotation, so a pool's blocks are empty until its nodes carry it, and a pool that follows the queue has powered-down
records no annotation reaches. Reports only; called by ``stacks/validate/slurm.py``.
"""

from __future__ import annotations

from stacks.plan.nvlink import default_block_size, nodes_per_nvlink_domain
from stacks.spec.scheduling import SchedulingSpec
from stacks.validate.issues import Issues


def check_power_saving_blocks(issues: Issues, sched: SchedulingSpec, multi: list) -> None:
    """A pool that follows the queue has powered-down records whose block nothing can know in advance: Slinky sets a
    node's block only from the Kubernetes node its pod lands on, and a resumed ordinal may land on any rack. A real
    26.05 slurmctld refuses a multi-node job when some of the pool's nodes are in blocks and others in none
    (tests/render/test_slurm_power_saving_blocks_real.py). One block is planned into the records themselves
    (``ScalingPlan.record_topology``); several blocks cannot be kept, so they are refused."""
    from stacks.plan.slurm_scaling import scales

    size = sched.slurm.block_size
    for name, i, pool, m in multi:
        if not scales(sched.slurm.scaling, pool.min_nodes, pool.max_nodes):
            continue
        block = size or default_block_size(m, pool.max_nodes)
        blocks = pool.max_nodes // block
        if blocks > 1:
            issues.pool(i, name).error(
                "minNodes",
                f"a pool that follows the queue (minNodes < maxNodes) cannot keep {blocks} Slurm blocks of "
                f"{block} nodes: its powered-down nodes are in no block until their pods land on annotated nodes, "
                "and the pod of an ordinal may land in any block, so Slurm refuses multi-node jobs that need nodes "
                'in and out of blocks ("Requested node configuration is not available")',
                pool.min_nodes,
                allowed=f"minNodes = maxNodes ({pool.max_nodes}) for block placement over several blocks, or a pool of "
                f"one block (maxNodes <= {block})",
                fix=f"set nodePools[{i}].minNodes: {pool.max_nodes}, or scheduling.slurm.scaling.enabled: false, or "
                "split the pool into one pool per block",
            )
        elif blocks == 1 and pool.min_nodes > 0:
            issues.pool(i, name).warn(
                "minNodes",
                f"the first {pool.min_nodes} node(s) of this pool are pods from the start and the others "
                "powered-down records without a block: annotating only the Kubernetes nodes puts some of the pool in "
                'its one block and the rest in none, and Slurm then refuses multi-node jobs ("Requested node '
                'configuration is not available"); one block places jobs the same as none',
                pool.min_nodes,
                allowed="minNodes: 0 (the records are created in the block), or no topology annotation on its nodes",
                fix=f"set nodePools[{i}].minNodes: 0, or leave the pool's Kubernetes nodes unannotated",
            )


def warn_empty_blocks(issues: Issues, sched: SchedulingSpec, multi: list) -> None:
    """Slinky gives a slurmd node its block only from its Kubernetes node's annotation, which gpu-cluster sets only on
    pools of one EKS node group per UltraServer block (``stacks/plan/slurm_block_nodes.py``); elsewhere, until
    someone sets it, a real 26.05 slurmctld runs the block partition's jobs on the lowest free nodes, as if flat
    (tests/render/test_slurm_empty_blocks_real.py). The values to set come from the planner's own names."""
    from stacks.plan.slurm_topology import (
        SLINKY_TOPOLOGY_ANNOTATION,
        annotation_value,
        block_topology_name,
        pool_blocks,
    )
    from stacks.plan.slurm_scaling import scales

    size = sched.slurm.block_size
    for name, i, pool, m in multi:
        if scales(sched.slurm.scaling, pool.min_nodes, pool.max_nodes):
            continue  # its records carry the block, or it is refused / warned above: no annotation advice
        block = size or default_block_size(m, pool.max_nodes)
        topology = block_topology_name(name)
        values = [annotation_value(topology, b) for b in pool_blocks(name, pool.max_nodes, block)]
        if not values:
            continue  # maxNodes below one block: refused elsewhere
        if len(values) > 1 and len(pool.capacity.reservations or ()) == len(values):
            continue  # one EKS node group per UltraServer block: its nodes are annotated as they join
        nvlink = nodes_per_nvlink_domain(m) > 1  # always on level nvlink (validation refuses it elsewhere)
        issues.pool(i, name).warn(
            "multiNode",
            f"the Slinky operator puts a node in one of Slurm's blocks (Topology={topology}) only from "
            f"its Kubernetes node's annotation {SLINKY_TOPOLOGY_ANNOTATION} (slurm-operator docs/usage/topology.md), "
            "which gpu-cluster sets only on EKS pools that list one capacity block per UltraServer in "
            "capacity.reservations: until the pool's nodes carry it every block is empty and Slurm places "
            f"-p {name} jobs as if there were no blocks"
            + (", so a job may straddle NVLink domains" if nvlink and len(values) > 1 else ""),
            f"{len(values)} block(s) of {block} nodes",
            allowed=f"each node of one block annotated {SLINKY_TOPOLOGY_ANNOTATION}={values[0]}"
            + (
                f" (next blocks: {', '.join(values[1:4])}{', ...' if len(values) > 4 else ''})"
                if len(values) > 1
                else ""
            )
            + (", one block per NVLink domain (the nodes of one nvidia.com/gpu.clique value)" if nvlink else ""),
            fix=f"annotate the nodes after they join: kubectl annotate node <node> "
            f"{SLINKY_TOPOLOGY_ANNOTATION}={values[0]} (or run NVIDIA Topograph)",
        )
