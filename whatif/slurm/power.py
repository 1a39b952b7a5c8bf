"""Slurm power saving on pools that follow the queue (``scheduling.slurm.scaling``, rendered by
``scheduling/slurm_scaling.py``), as slurmctld and the rendered Resume/SuspendProgram drive a Slinky NodeSet.

- Nodes above ``minNodes`` start powered down. A job that does not fit the powered-up nodes is given powered-down
  ones (powered-up nodes first, then the lowest ordinals): slurmctld resumes them and the job waits (CONFIGURING)
  until every node has registered. ResumeProgram raises the NodeSet's replicas to the highest resumed ordinal + 1, so
  every lower ordinal gets a pod too; a new pod needs a new Kubernetes node (the catalog's provisioning delay).
- A node idle for ``SuspendTime`` is suspended unless it is one of the ``minNodes`` lowest powered-up ordinals
  (``SuspendExcNodes=<pool>:<min>`` keeps that many up); it cannot be resumed for ``SuspendTimeout``. SuspendProgram lowers replicas to
  the highest ordinal still powered up + 1 (never below ``minNodes``): a powered-down node below that keeps its pod,
  and so its paid Kubernetes node.
- Billing follows the Kubernetes nodes: from the request of a node until the node autoscaler removes it,
  ``SCALE_DOWN_UNNEEDED_S`` after its pod went. A node resumed while its Kubernetes node is still there (its pod kept,
  or the node not yet removed) is ready at once (pod start latency is not modelled, as elsewhere).
- On a rack-scale NVLink pool whose jobs use ComputeDomains, each resumed node's new slurmd pod claims the IMEX
  channel and starts only once every IMEX daemon of the domain is Ready, so its slurmd registers the ComputeDomain
  start later: the resumed pods times ``compute_domain_s_per_pod`` (``stacks/plan/start_time.py``, the factor of a
  Kubeflow job's start).
"""

from __future__ import annotations

import math
from typing import Protocol, Sequence

from whatif.autoscale import SCALE_DOWN_UNNEEDED_S
from whatif.cluster import PowerModel, slices_for
from whatif.core import TICK, Host
from whatif.slurm.job import SlurmJob
from whatif.nodes import BOOTING, OFF, UP, Node, PoolState, allocate, pick_in_blocks, release

JOB_CHECK_S = 30.0
"""slurmctld's periodic job pass (``PERIODIC_TIMEOUT``): a job whose resumed nodes have registered leaves
CONFIGURING there (real 26.05: nodes up at +2 s, the job launched at the next pass, 20 s later)."""
POWER_SAVE_INTERVAL_S = 10.0
"""``power_save_interval`` (slurm.conf default 10 s): how often slurmctld looks for nodes idle for SuspendTime."""


class SlurmScheduler(Protocol):
    """What power saving uses of ``slurm_sched.SlurmScheduler`` (named here so the two modules form no circle)."""

    def start(self, js: SlurmJob, pool: PoolState, chosen: list[Node], backfilled: bool, now: float) -> None: ...
    def dequeue(self, js: SlurmJob) -> None: ...


class PowerSaving:
    def __init__(self, sched: SlurmScheduler, eng: Host, model: PowerModel):
        self.sched, self.eng, self.m = sched, eng, model
        self.pools = {name: eng.pools[name] for name in model.pools if name in eng.power_pools}
        self.replicas = {name: model.pools[name] for name in self.pools}
        self.down_until: dict[int, float] = {}
        """id(node) -> end of its SuspendTimeout (POWERING_DOWN: not resumable before)."""
        self.pod_gen: dict[int, int] = {}
        """id(node) -> bumped whenever the node's pod comes or goes (a pending 'unbill' tick checks it)."""
        self.unbill_at: dict[int, float] = {}
        """id(node) -> when its empty Kubernetes node goes (pod deleted, node not yet removed)."""
        self.log: list[tuple[float, str, str]] = []
        """(time, "resume" | "suspend", node): what slurmctld would hand to ResumeProgram / SuspendProgram."""
        self.configuring: list[tuple[SlurmJob, PoolState, list[Node], bool]] = []
        """Jobs holding nodes that are still resuming: (job, pool, nodes, backfilled)."""
        self._checks: set[float] = set()
        self.domain_s: dict[int, float] = {}
        """id(job) -> the ComputeDomain start its resumed pods wait for once their nodes are up (0: none)."""
        self.registered_at: dict[int, float] = {}
        """id(job) -> when the slurmd of its last resumed node registers (its nodes up + ``domain_s``)."""

    def scales(self, pool: PoolState) -> bool:
        return pool.model.name in self.pools

    # -- placement --------------------------------------------------------------------------------------------
    def place(self, pool: PoolState, nodes: int, slices: int, exclusive: bool, now: float) -> list[Node] | None:
        """Nodes for the job counting powered-down ones that may be resumed; powered-up (and resuming) nodes first,
        then the lowest ordinals. None when even those are too few."""
        need = pool.model.slices_per_node if exclusive else slices
        live = [n for n in pool.nodes if n.state in (UP, BOOTING) and n.free >= need]
        off = [n for n in pool.nodes if n.state == OFF and self.down_until.get(id(n), 0.0) <= now]
        if len(live) + len(off) < nodes:
            return None
        fits = sorted(live, key=lambda n: (n.free, n.index)) + off
        block = pool.model.block_nodes
        if block and nodes > 1:
            chosen = pick_in_blocks(fits, nodes, block, pool.model.max_nodes)
            if chosen is not None or pool.model.block_required:
                return chosen
        return fits[:nodes]

    def begin(self, js: SlurmJob, pool: PoolState, chosen: Sequence[Node], backfilled: bool, now: float) -> None:
        """Resume the chosen powered-down nodes and hold every chosen node for the job until they are all up."""
        resumed = 0
        for node in chosen:
            if node.state == OFF:
                self._resume(pool, node, now)
                resumed += 1
        if resumed and pool.model.compute_domains:  # each resumed node's new slurmd pod joins the ComputeDomain
            self.domain_s[id(js)] = resumed * self.eng.cluster.start["compute_domain_s_per_pod"]
        if all(n.state == UP for n in chosen) and not self.domain_s.get(id(js)):
            self.sched.start(js, pool, list(chosen), backfilled, now)
            return
        self.sched.dequeue(js)
        m = pool.model
        js.alloc = allocate(chosen, js.n, slices_for(m, js.job.gpus_per_node, js.job.gpu_share), m.exclusive)
        js.start = now + m.provision_s  # the backfill plan counts the job from when its nodes are expected up
        self.configuring.append((js, pool, list(chosen), backfilled))

    def poll(self, now: float) -> None:
        """Start the configuring jobs whose nodes have all registered, at slurmctld's periodic job check (every
        ``JOB_CHECK_S``: "job_time_limit: Configuration for JobId=… complete" in its log); until then, a wake-up."""
        if not self.configuring:
            return
        waiting = []
        self._checks = {t for t in self._checks if t > now}
        for js, pool, chosen, backfilled in self.configuring:
            if all(n.state == UP for n in chosen):
                registered = self.registered_at.setdefault(id(js), now + self.domain_s.get(id(js), 0.0))
                due = math.ceil(max(now, registered) / JOB_CHECK_S) * JOB_CHECK_S
                if due <= now:
                    release(js.alloc, js.n)
                    js.alloc = []
                    self.domain_s.pop(id(js), None)
                    self.registered_at.pop(id(js), None)
                    self.sched.start(js, pool, chosen, backfilled, now)
                    continue
                if due not in self._checks:
                    self._checks.add(due)
                    self.eng.push(due, TICK, ("check",))
            waiting.append((js, pool, chosen, backfilled))
        self.configuring = waiting

    def holding(self) -> list[SlurmJob]:
        return [js for js, _, _, _ in self.configuring]

    # -- resume and suspend -----------------------------------------------------------------------------------
    def _resume(self, pool: PoolState, node: Node, now: float) -> None:
        name = pool.model.name
        kept = node.since is not None  # its Kubernetes node is still there (pod kept, or not yet removed)
        self.log.append((now, "resume", node.name))
        self.eng.node_on(pool, node, ready=kept)
        if node.index + 1 > self.replicas[name]:
            self.replicas[name] = node.index + 1
            for other in pool.nodes[: node.index + 1]:  # every lower ordinal gets a pod, and so a paid node
                self.pod_gen[id(other)] = self.pod_gen.get(id(other), 0) + 1
                pool.bill_on(other, now)

    def node_idle(self, pool: PoolState, node: Node, now: float) -> None:
        """A node of a scaling pool emptied: check it again at the power-save pass after SuspendTime."""
        at = math.ceil((now + self.m.suspend_time_s) / POWER_SAVE_INTERVAL_S) * POWER_SAVE_INTERVAL_S
        self.eng.push(at, TICK, ("suspend", pool, node, node.epoch, node.idle_since))

    def tick(self, payload: tuple, now: float) -> None:
        if payload[0] == "check":
            self.eng.dirty = True  # the scheduling pass after this tick starts the configured jobs
        elif payload[0] == "suspend":
            _, pool, node, epoch, since = payload
            self._suspend(pool, node, epoch, since, now)
        else:
            _, pool, node, gen = payload
            if self.pod_gen.get(id(node), 0) == gen and node.index >= self.replicas[pool.model.name]:
                pool.bill_off(node, now)  # the node autoscaler removed the empty Kubernetes node

    def _suspend(self, pool: PoolState, node: Node, epoch: int, since: float, now: float) -> None:
        if node.epoch != epoch or node.state != UP or node.jobs or node.idle_since != since:
            return
        name = pool.model.name
        kept = [n for n in pool.nodes if n.state != OFF][: self.m.pools[name]]
        if node in kept:
            return  # SuspendExcNodes=<pool>:<min>: minNodes stay powered up (here the lowest ordinals)
        self.log.append((now, "suspend", node.name))
        self.eng.node_off(pool, node, bill=False)
        self.down_until[id(node)] = now + self.m.suspend_timeout_s
        top = max((n.index + 1 for n in pool.nodes if n.state != OFF), default=0)
        new = max(top, self.m.pools[name])
        for gone in pool.nodes[new : self.replicas[name]]:  # pods deleted: their nodes go after the unneeded time
            gen = self.pod_gen[id(gone)] = self.pod_gen.get(id(gone), 0) + 1
            self.unbill_at[id(gone)] = now + SCALE_DOWN_UNNEEDED_S
            self.eng.push(now + SCALE_DOWN_UNNEEDED_S, TICK, ("unbill", pool, gone, gen))
        self.replicas[name] = min(self.replicas[name], new)

    def after_end(self, pool: PoolState, end: float) -> tuple[list[tuple[float, str]], dict[int, float]]:
        """What happens to an idle pool after the run's last job: (suspends as (time, node), node index -> when its
        Kubernetes node goes). Nodes above minNodes idle until SuspendTime and are suspended (replicas lowered as
        above); an emptied Kubernetes node goes ``SCALE_DOWN_UNNEEDED_S`` later."""
        name, lo = pool.model.name, self.m.pools[pool.model.name]
        up = sorted((n for n in pool.nodes if n.state != OFF), key=lambda n: n.index)
        rest = up[lo:]
        if any(n.jobs for n in rest):
            return [], {}  # a job still runs (the run hit its drain limit): nothing to add
        suspends: list[tuple[float, str]] = []
        gone: dict[int, float] = {}
        replicas, live = self.replicas[name], {n.index for n in up}
        for n in sorted(rest, key=lambda n: (n.idle_since, n.index)):
            t = max(
                end, math.ceil((n.idle_since + self.m.suspend_time_s) / POWER_SAVE_INTERVAL_S) * POWER_SAVE_INTERVAL_S
            )
            suspends.append((t, n.name))
            live.discard(n.index)
            new = max(max(live, default=-1) + 1, lo)
            for i in range(new, replicas):
                gone.setdefault(i, t + SCALE_DOWN_UNNEEDED_S)
            replicas = min(replicas, new)
        return suspends, gone

    def unbilled_tail(self, pool: PoolState, end: float) -> float:
        """Node-seconds paid after the run's last job (``after_end``); nodes whose pod is already gone are paid until
        their node goes, the minNodes kept up only until the end of the run."""
        name, lo = pool.model.name, self.m.pools[pool.model.name]
        kept = sorted((n for n in pool.nodes if n.state != OFF), key=lambda n: n.index)[:lo]
        _, gone = self.after_end(pool, end)
        tail = 0.0
        for n in pool.nodes:
            if n.since is None or n in kept:
                continue
            until = gone.get(n.index, self.unbill_at.get(id(n), end) if n.index >= self.replicas[name] else end)
            tail += max(0.0, until - end)
        return tail
