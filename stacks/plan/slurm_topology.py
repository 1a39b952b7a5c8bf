"""Topology for Slurm: ``topology.yaml`` with one block topology per multi-node pool, or one tree over zones.

Slinky's nodes are dynamic, so ``topology.yaml`` declares blocks (or leaf switches) without node names; a node joins
one when its Kubernetes node carries the annotation ``topology.slinky.slurm.net/spec: <topology>:<block>`` (the
operator then sets the Slurm node's ``Topology=``). Listing node names instead makes slurmctld log
``_find_node_record: lookup failure`` for every node at start-up (checked against a real 26.05 controller).
Partitions of multi-node pools name their topology; everything else uses the flat cluster default. Pure: no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import yaml

from catalog import MachineType
from stacks.plan.nvlink import default_block_size
from stacks.spec.scheduling import SchedulingSpec, TopologyLevel, TopologyMode

if TYPE_CHECKING:  # a type only
    from stacks.plan.slurm_nodes import NodeSetPlan

SLINKY_TOPOLOGY_ANNOTATION = "topology.slinky.slurm.net/spec"
"""The Kubernetes node annotation the Slinky operator copies into the Slurm node's ``Topology=`` (value
``<topology name>:<unit>``; SlinkyProject/slurm-operator docs/usage/topology.md, shared facts anchors-and-gaps.md)."""
DEFAULT_TOPOLOGY = "default"
ZONE_TOPOLOGY = "zones"
ROOT_SWITCH = "root"


def block_topology_name(pool: str) -> str:
    """A multi-node pool's block topology is named after the pool (its partition's ``Topology=``)."""
    return pool


def pool_blocks(pool: str, nodes: int, block_size: int) -> tuple[str, ...]:
    """The block names of a pool's block topology (one per ``block_size`` nodes)."""
    return tuple(f"{pool}-b{i}" for i in range(nodes // block_size))


def annotation_value(topology: str, unit: str) -> str:
    """What a node's ``topology.slinky.slurm.net/spec`` must hold to join ``unit`` (a block or leaf switch) of
    ``topology``: the topology's name, a colon, the unit (Slurm's ``Topology=`` node field)."""
    return f"{topology}:{unit}"


def block_sizes(block_size: int, nodes: int) -> list[int]:
    """Base block size, then each power-of-two multiple up to the pool (Slurm aggregates blocks at those levels)."""
    sizes = [block_size]
    while sizes[-1] * 2 <= nodes:
        sizes.append(sizes[-1] * 2)
    return sizes


@dataclass(frozen=True)
class BlockTopology:
    name: str
    """Topology name = pool name."""
    pool: str
    block_size: int
    blocks: tuple[str, ...]
    sizes: tuple[int, ...]


@dataclass(frozen=True)
class TreeTopology:
    name: str
    zones: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Zone switch -> leaf switches (one per multi-node pool, which lives in exactly one zone)."""


@dataclass(frozen=True)
class TopologyPlan:
    blocks: tuple[BlockTopology, ...] = ()
    tree: TreeTopology | None = None

    @property
    def empty(self) -> bool:
        return not self.blocks and self.tree is None

    def for_pool(self, pool: str) -> str | None:
        """Topology a pool's partition names, or None for the flat default."""
        for block in self.blocks:
            if block.pool == pool:
                return block.name
        if self.tree is not None and any(pool in leaves for leaves in self.tree.zones.values()):
            return self.tree.name
        return None

    def for_pools(self, pools: Sequence[str]) -> str | None:
        """A partition over several pools uses the tree when every pool is in it; block topologies are per pool."""
        if len(pools) == 1:
            return self.for_pool(pools[0])
        if self.tree is not None and all(self.for_pool(p) == self.tree.name for p in pools):
            return self.tree.name
        return None

    def render_yaml(self) -> str | None:
        if self.empty:
            return None
        doc: list[dict] = [{"topology": DEFAULT_TOPOLOGY, "cluster_default": True, "flat": True}]
        for b in self.blocks:
            doc.append(
                {
                    "topology": b.name,
                    "cluster_default": False,
                    "block": {"block_sizes": list(b.sizes), "blocks": [{"block": name} for name in b.blocks]},
                }
            )
        if self.tree is not None:
            switches = [{"switch": ROOT_SWITCH, "children": ",".join(self.tree.zones)}]
            for zone, leaves in self.tree.zones.items():
                switches.append({"switch": zone, "children": ",".join(leaves)})
            switches += [{"switch": leaf} for leaves in self.tree.zones.values() for leaf in leaves]
            doc.append({"topology": self.tree.name, "cluster_default": False, "tree": {"switches": switches}})
        return "---\n" + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def plan_topology(
    sched: SchedulingSpec, nodesets: Sequence[NodeSetPlan], machines: dict[str, MachineType]
) -> TopologyPlan:
    """``machines``: pool name -> catalog machine (for NVLink domains)."""
    topo = sched.topology
    if topo.mode == TopologyMode.NONE or topo.level == TopologyLevel.HOST:
        return TopologyPlan()
    multi = [n for n in nodesets if n.multi_node]
    if topo.level == TopologyLevel.ZONE:
        zones: dict[str, list[str]] = {}
        for n in multi:
            zones.setdefault(n.zones[0], []).append(n.pool)
        return (
            TopologyPlan(tree=TreeTopology(ZONE_TOPOLOGY, {z: tuple(p) for z, p in zones.items()}))
            if zones
            else TopologyPlan()
        )
    blocks = []
    for n in multi:  # level block or nvlink: on a GB200 pool the base block is one NVLink domain either way
        size = sched.slurm.block_size or default_block_size(machines[n.pool], n.replicas)
        blocks.append(
            BlockTopology(
                name=block_topology_name(n.pool),
                pool=n.pool,
                block_size=size,
                blocks=pool_blocks(n.pool, n.replicas, size),
                sizes=tuple(block_sizes(size, n.replicas)),
            )
        )
    return TopologyPlan(blocks=tuple(blocks))
