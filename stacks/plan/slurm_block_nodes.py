"""Slurm blocks of a pool of several UltraServers, known when the node groups are made: each EKS node group is one
UltraServer capacity block (``stacks/plan/eks_pool.ultraserver_groups``), so it is one Slurm block of the pool's
block topology. Each group's nodes carry the block's name as a label and register with a startup taint; the block
annotator (``render/slurm_block_annotator.py``) writes Slinky's ``topology.slinky.slurm.net/spec`` annotation from
the label and then removes the taint. Slinky copies the annotation onto the slurmd pod when the pod is bound
(slurm-operator docs/usage/topology.md), so the taint keeps slurmd pods off a node until it is annotated.

The taint key uses the Cluster Autoscaler's startup-taint prefix, which its node templates leave out and which marks
a node as still starting (kubernetes/autoscaler cluster-autoscaler/utils/taints/taints.go ``StartupTaintPrefix``).
Pure: no Pulumi.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a type only
    from stacks.plan.slurm_topology import TopologyPlan

BLOCK_LABEL = "gpu-cluster/slurm-block"
"""Node label: the Slurm block (``<pool>-b<i>``) of the UltraServer the node belongs to."""
REGISTRATION_TAINT_KEY = "startup-taint.cluster-autoscaler.kubernetes.io/slurm-topology"
"""61 characters: EKS takes taint keys of at most 63."""
REGISTRATION_TAINT_VALUE = "pending"


def with_block_labels(pools: dict[str, Any], topology: TopologyPlan) -> dict[str, str]:
    """Label and taint each UltraServer group of a pool whose Slurm blocks are its groups (one block per group, in
    order); ``pools`` (name -> ``stacks.plan.stack.PoolPlan``, which imports this module) is updated in place. Returns pool -> its block topology's name, for the annotator (empty: no
    pool needs one)."""
    annotated: dict[str, str] = {}
    for block in topology.blocks:
        plan = pools.get(block.pool)
        eks = plan.eks if plan is not None else None
        if plan is None or eks is None or len(eks.groups) < 2 or len(eks.groups) != len(block.blocks):
            continue  # one group, or blocks that are not the groups: the validation's advice stands
        taint = {"key": REGISTRATION_TAINT_KEY, "value": REGISTRATION_TAINT_VALUE, "effect": "NO_SCHEDULE"}
        groups = tuple(
            (suffix, dataclasses.replace(g, labels={**g.labels, BLOCK_LABEL: name}, taints=[*g.taints, taint]))
            for (suffix, g), name in zip(eks.groups, block.blocks)
        )
        pools[block.pool] = dataclasses.replace(plan, eks=dataclasses.replace(eks, groups=groups))
        annotated[block.pool] = block.name
    return annotated
