"""The node autoscaler of Kubernetes pools (GKE's, or the Cluster Autoscaler on EKS): pods that fit on no node ask
for new nodes, up to maxNodes, which join after the catalog's provisioning delay; a node empty for
``SCALE_DOWN_UNNEEDED_S`` goes away, down to minNodes. Slurm NodeSets and ``nodes_up='max'`` runs never scale."""

from __future__ import annotations

from typing import Any

from whatif.cluster import slices_for
from whatif.core import IDLE_CHECK, Host, Scheduler
from whatif.nodes import BOOTING, OFF, UP, Node, PoolState

SCALE_DOWN_UNNEEDED_S = 600.0
"""Cluster Autoscaler ``--scale-down-unneeded-time`` default, 10 minutes (kubernetes/autoscaler FAQ); GKE's default
``balanced`` profile keeps it."""


class Autoscaler:
    def __init__(self, eng: Host, scheduler: Scheduler[Any]):
        self.eng = eng
        self.scheduler = scheduler

    def scale_up(self, now: float) -> None:
        """Ask for the nodes the unplaced admitted workloads need (first-fit onto free and booting capacity)."""
        by_pool: dict[str, list] = {}
        for js in self.scheduler.unplaced():
            if js.pool is not None:
                by_pool.setdefault(js.pool.model.name, []).append(js)
        for name, waiting in by_pool.items():
            pool = self.eng.pools[name]
            self._grow(pool, waiting, now)

    def _grow(self, pool: PoolState, waiting: list, now: float) -> None:
        m = pool.model
        bins = [n.free for n in pool.nodes if n.state == UP] + [n.cap for n in pool.nodes if n.state == BOOTING]
        new = 0
        for js in waiting:
            need = slices_for(m, js.job.gpus_per_node, js.job.gpu_share)
            if need > m.slices_per_node:
                continue  # no node of this pool holds the pod: adding nodes cannot help
            for _ in range(js.job.nodes):
                for i, free in enumerate(bins):
                    if free >= need:
                        bins[i] -= need
                        break
                else:
                    bins.append(m.slices_per_node - need)
                    new += 1
        off = [n for n in pool.nodes if n.state == OFF]
        for node in off[:new]:
            self.eng.node_on(pool, node, ready=False)

    def watch_idle(self, pool: PoolState, node: Node, now: float) -> None:
        self.eng.push(now + SCALE_DOWN_UNNEEDED_S, IDLE_CHECK, (pool, node, node.epoch, now))

    def idle_check(self, payload: tuple, now: float) -> None:
        pool, node, epoch, since = payload
        if node.epoch != epoch or node.state != UP or node.free != node.cap or node.idle_since != since:
            return
        on = sum(1 for n in pool.nodes if n.state != OFF)
        if on > pool.model.min_nodes:
            self.eng.node_off(pool, node)

    def unbilled_tail(self, pool: PoolState, end: float) -> float:
        """Node-seconds past ``end`` that the run still pays for: after the last job, a node above minNodes stays up
        until the autoscaler removes it (empty for ``SCALE_DOWN_UNNEEDED_S``); a booting one joins first."""
        on = [n for n in pool.nodes if n.state != OFF]
        extra = len(on) - pool.model.min_nodes
        if extra <= 0:
            return 0.0
        tails = []
        for n in on:
            if n.free != n.cap:
                continue  # still running a job: the run ended without it finishing
            booted = n.since if n.since is not None else end  # a node that is on is paid for (since is set)
            idle_from = n.idle_since if n.state == UP else booted + pool.model.provision_s
            tails.append(max(0.0, idle_from + SCALE_DOWN_UNNEEDED_S - end))
        return sum(sorted(tails)[:extra])
