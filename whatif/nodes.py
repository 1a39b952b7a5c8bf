"""Nodes of each pool: which are up, what they hold, placement of a job's pods (best fit, by block when the pool is
placed by block), and billing while a node is up or booting."""

from __future__ import annotations

from typing import Sequence

from whatif.cluster import PoolModel
from stacks.plan.billing import paid_node_seconds
from whatif.model import PoolUsage

OFF, BOOTING, UP = 0, 1, 2


class Node:
    __slots__ = ("name", "index", "cap", "free", "state", "since", "idle_since", "jobs", "block", "epoch", "image_at")
    # since: when billing started (the node was asked for, booting included), None while not billed (a Slurm node can
    # be powered down while its Kubernetes node is still paid for); idle_since: last time it emptied

    def __init__(self, pool: PoolModel, index: int):
        self.name = f"{pool.name}-{index}"
        self.index = index
        self.cap = pool.slices_per_node
        self.free = self.cap
        self.state = OFF
        self.since: float | None = None
        self.idle_since = 0.0
        self.jobs: dict[int, int] = {}
        """Job number -> slices it holds here."""
        self.block = index // pool.block_nodes if pool.block_nodes else 0
        self.epoch = 0
        """Bumped when the node goes away, so its pending interruption event is ignored."""
        self.image_at: float | None = None
        """When the pool's job image is (or will be) on the node; None: not asked for yet."""


class PoolState:
    def __init__(self, model: PoolModel):
        self.model = model
        self.nodes = [Node(model, i) for i in range(model.max_nodes)]
        self.usage = PoolUsage(model.name, model.gpus_per_node, model.usd_per_node_hour)
        self.billed: list[tuple[float, float]] = []
        """(from, to) of every node's billed stretch so far, for a pool with committed nodes (``commit``)."""
        self.closed = False
        """A capacity block past its drain time: its nodes are gone for good, none comes up or is billed again."""

    # -- node life --------------------------------------------------------------------------------------------
    def count(self, state: int) -> int:
        return sum(1 for n in self.nodes if n.state == state)

    def power_on(self, node: Node, now: float, ready: bool) -> None:
        if self.closed:
            return
        node.state, node.idle_since = (UP if ready else BOOTING), now
        node.free, node.jobs = node.cap, {}
        self.bill_on(node, now)
        joins = now if ready else now + self.model.provision_s
        node.image_at = joins + self.model.pull_s if self.model.prepull else None

    def power_off(self, node: Node, now: float, bill: bool = True) -> None:
        """``bill=False``: the node leaves the scheduler but stays paid for (``bill_off`` ends that)."""
        if bill:
            self.bill_off(node, now)
        node.state, node.free, node.jobs = OFF, node.cap, {}
        node.epoch += 1

    def bill_on(self, node: Node, now: float) -> None:
        if node.since is None and not self.closed:
            node.since = now

    def bill_off(self, node: Node, now: float) -> None:
        if node.since is not None:
            self._paid(node.since, now)
            node.since = None

    def settle(self, now: float) -> None:
        """Bill every node still paid for at the end of the run."""
        for n in self.nodes:
            if n.since is not None:
                self._paid(n.since, now)
                n.since = now

    def _paid(self, start: float, end: float) -> None:
        self.usage.paid_node_s += end - start
        if self.model.committed_nodes:
            self.billed.append((start, end))

    def commit(self, end: float) -> None:
        """Reservations and capacity blocks: the committed nodes are paid for the whole run whether they ran or not,
        the nodes above them while up (the billing model of ``stacks/plan/billing.py``)."""
        if self.model.committed_nodes:
            # a block's fee covers its window, and only it: all of it once the block has ended (its last 30 minutes
            # are paid with no node up), nothing past it
            window = self.model.window_s
            span = end if window is None else window if self.closed else min(end, window)
            self.usage.paid_node_s = paid_node_seconds(self.billed, self.model.committed_nodes, span)

    def up_slices(self) -> int:
        return sum(n.cap for n in self.nodes if n.state == UP)

    # -- placement --------------------------------------------------------------------------------------------
    def place(self, nodes: int, slices: int, exclusive: bool, preferred_block: bool = True) -> list[Node] | None:
        """Nodes for a job of ``nodes`` × ``slices`` now, or None. Exclusive pools give whole nodes."""
        need = self.model.slices_per_node if exclusive else slices
        fits = [n for n in self.nodes if n.state == UP and n.free >= need]
        if len(fits) < nodes:
            return None
        block = self.model.block_nodes
        if block and nodes > 1:
            chosen = pick_in_blocks(fits, nodes, block, self.model.max_nodes)
            if chosen is not None or self.model.block_required:
                return chosen
        if nodes == 1:  # best fit: the fullest node that still holds it, lowest index on ties (as Slurm)
            return [min(fits, key=lambda n: (n.free, n.index))]
        return sorted(fits, key=lambda n: (n.free, n.index))[:nodes]


def pick_in_blocks(fits: Sequence[Node], nodes: int, block: int, max_nodes: int) -> list[Node] | None:
    """The smallest aligned group of blocks (block, 2 × block, … nodes: Slurm's block levels) holding ``nodes`` free
    nodes; within a level, the group with the fewest free nodes that still fits (keeps big groups whole)."""
    size = block
    while size < nodes and size < max_nodes:
        size *= 2
    groups: dict[int, list[Node]] = {}
    for n in fits:
        groups.setdefault(n.index // size, []).append(n)
    best = [g for g in groups.values() if len(g) >= nodes]
    if not best:
        return None
    group = min(best, key=lambda g: (len(g), g[0].index))
    return sorted(group, key=lambda n: n.index)[:nodes]


def allocate(chosen: Sequence[Node], job: int, slices: int, exclusive: bool) -> list[tuple[Node, int]]:
    out = []
    for n in chosen:
        take = n.cap if exclusive else slices
        n.free -= take
        n.jobs[job] = take
        out.append((n, take))
    return out


def release(alloc: Sequence[tuple[Node, int]], job: int) -> None:
    for n, take in alloc:
        if n.jobs.pop(job, None) is not None:
            n.free += take
