"""Slurm as rendered (stacks/plan/slurm.py): multifactor priority (Fair Tree fair-share with decayed usage, age,
job size, QOS), the main scheduler (priority order; a job that does not fit keeps lower-priority jobs off its
partition's nodes), preemption by QOS or by partition PriorityTier (REQUEUE, with Slurm's 121 s hold before the
requeued job may start again, or CANCEL), GrpTRES GPU caps per account (with accounting only), the backfill pass
every ``bf_interval`` (``slurm_backfill.py``) and power saving on pools that follow the queue (``slurm_power.py``)."""

from __future__ import annotations

import bisect
import math
from typing import Any

from whatif.cluster import PartitionModel, slices_for
from whatif.core import ADMITTED, DONE, PENDING, RUNNING, TICK, Host
from whatif.model import Job
from whatif.nodes import UP, Node, PoolState
from whatif.slurm.backfill import backfill
from whatif.slurm.job import SlurmJob
from whatif.slurm.power import PowerSaving
from whatif.slurm.qos_limits import QosLimits

CONFIGURING = ADMITTED
"""Out of the queue, holding nodes that are being resumed (power saving)."""
DEFAULT_QUEUE_DEPTH = 100
"""Slurm's ``default_queue_depth``: jobs the main scheduler looks at per pass."""


class SlurmScheduler:
    def __init__(self, eng: Host):
        self.eng = eng
        m = eng.cluster.slurm
        assert m is not None
        self.m = m
        self.queue: list[SlurmJob] = []
        """Pending jobs sorted by ``key`` (partition tier, priority, submit order)."""
        self.running: list[SlurmJob] = []
        self.usage = {a: 0.0 for a in m.fairshare}
        self.fs = {a: 1.0 for a in m.fairshare}
        self.last_calc = 0.0
        self.held: dict[tuple[str, str], float] = {}
        self.held_by: dict[int, float] = {}
        self._caps = m.gpu_caps
        self.qos_limits = QosLimits(m.qos_limits)
        self.wall_from_qos: set[int] = set()
        """Jobs submitted without a time limit that got their QOS's MaxWall."""
        self.bf_at: float | None = None
        self.total_nodes = sum(p.max_nodes for p in eng.cluster.pools.values()) or 1
        self.total_cpus = sum(p.max_nodes * p.cpus_per_node for p in eng.cluster.pools.values()) or 1
        self.max_qos = max(m.qos_priority.values(), default=0) or 1
        self._wake: dict[int, float] = {}
        """Job -> when the main scheduler will consider it for preemption (a wake-up is queued for then)."""
        self.power = PowerSaving(self, eng, m.power) if m.power is not None and eng.power_pools else None

    # -- the scheduler interface -------------------------------------------------------------------------------
    def new_job(self, job: Job, n: int) -> SlurmJob:
        return SlurmJob(job, n)

    def unplaced(self) -> list[SlurmJob]:
        return []  # a started Slurm job has its nodes; NodeSets scale by power saving only (slurm_power.py)

    def pending(self) -> int:
        return len(self.queue) + (len(self.power.configuring) if self.power else 0)

    def limit_source(self, js: SlurmJob) -> str | None:
        """The limit that ends the job, named for a report: its QOS's MaxWall if it got that one."""
        if js.n not in self.wall_from_qos:
            return None
        wall = self.qos_limits.limits[js.qos or ""][0]
        assert wall is not None
        return f"QOS {js.qos}'s MaxWall {wall / 60:g} min"

    def never_startable(self, job: Job) -> str | None:
        return self.qos_limits.refusal(job, job.priority or self.m.default_qos)

    def submit(self, js: SlurmJob, now: float) -> None:
        js.qos = js.job.priority or self.m.default_qos
        limited = self.qos_limits.with_time_limit(js.job, js.qos)
        if limited is not js.job:
            self.wall_from_qos.add(js.n)
        js.job = limited
        js.eligible = now
        self._enqueue(js, now)

    def released(self, js: SlurmJob, now: float, requeue: bool) -> None:
        self.running.remove(js)
        self._account(js, -1)
        self._accrue(js, now)
        if self.power is not None and self.power.scales(js.pool):  # type: ignore[arg-type]
            pool = js.pool
            assert pool is not None
            for name in js.placed_nodes:
                node = pool.nodes[int(name.rsplit("-", 1)[1])]
                if node.state == UP and not node.jobs:
                    self.power.node_idle(pool, node, now)
        if requeue:  # held (BeginTime) for the requeue delay; its age starts over then
            js.total_cpus = 0.0  # Slurm clears it on requeue: the size counts the request again
            js.eligible = now + self.m.requeue_delay_s
            self._enqueue(js, now)
            self.eng.push(js.eligible, TICK, "eligible")

    def schedule(self, now: float) -> None:
        self._calc(now)
        if self.power is not None:
            self.power.poll(now)
        self._main(now)
        if self.queue and self.m.bf_interval_s > 0 and self.eng.options.backfill and self.bf_at is None:
            self.bf_at = (math.floor(now / self.m.bf_interval_s) + 1) * self.m.bf_interval_s
            self.eng.push(self.bf_at, TICK, "backfill")

    def tick(self, now: float, payload: Any) -> None:
        if payload == "eligible":
            self.eng.dirty = True
            return
        if isinstance(payload, tuple):
            assert self.power is not None
            self.power.tick(payload, now)
            return
        self.bf_at = None
        self._calc(now)
        backfill(self, now)

    # -- priority ---------------------------------------------------------------------------------------------
    def _enqueue(self, js: SlurmJob, now: float) -> None:
        js.state = PENDING
        js.prio = self.priority(js, now)
        self._key(js)
        bisect.insort(self.queue, js, key=lambda j: j.key)

    def _key(self, js: SlurmJob) -> None:
        js.key = (-self.partition(js).tier, -math.floor(js.prio), js.job.submit_s, js.n)

    def partition(self, js: SlurmJob) -> PartitionModel:
        part = self.m.partition(js.job.pool)
        assert part is not None  # feasible.never_startable refused jobs without one
        return part

    def cpus(self, js: SlurmJob) -> float:
        pool = self.eng.cluster.pools[self.partition(js).pools[0]]
        if pool.exclusive:
            return js.job.nodes * pool.cpus_per_node
        return js.job.nodes * js.job.gpus_per_node * pool.cpus_per_node / pool.gpus_per_node

    def requested_cpus(self, js: SlurmJob) -> float:
        """The CPUs a pending job's size factor counts. Slurm 26.05 (slurm-26-05-3-1) uses ``total_cpus`` when set,
        else the requested CPUs (priority_multifactor.c l.2132-2143). ``total_cpus`` is 0 at submission and again on
        requeue (job_mgr.c l.16836): the size then counts what the job asks for (``DefCpuPerGPU`` per GPU). On an
        ``OverSubscribe=EXCLUSIVE`` partition (``max_share`` 0, read_config.c l.1527) backfill tests every job as
        whole-node (backfill.c l.3180), and that will-run test sets ``total_cpus`` to the whole nodes' CPUs before it
        returns (select/cons_tres/job_test.c l.2195-2207, l.2245): from the next recalculation a 1-GPU job counts a
        whole node, as an 8-GPU job does."""
        if js.total_cpus > 0:
            return js.total_cpus
        job, part = js.job, self.partition(js)
        if job.gpus_per_node > 0 and part.def_cpu_per_gpu > 0:
            cpus = float(job.nodes * job.gpus_per_node * part.def_cpu_per_gpu)
        else:
            pool = self.eng.cluster.pools[part.pools[0]]
            cpus = job.nodes * job.gpus_per_node * pool.cpus_per_node / pool.gpus_per_node
        return max(cpus, float(job.nodes))

    def priority(self, js: SlurmJob, now: float) -> float:
        m, job = self.m, js.job
        age = min(max(0.0, now - js.eligible), m.max_age_s) / m.max_age_s
        size = (job.nodes / self.total_nodes + self.requested_cpus(js) / self.total_cpus) / 2  # favor large
        qos = m.qos_priority.get(js.qos or "", 0) / self.max_qos
        return (
            m.weight_age * age
            + m.weight_fairshare * self.fs.get(job.queue, 1.0)
            + m.weight_job_size * size
            + m.weight_qos * qos
        )

    def _accrue(self, js: SlurmJob, now: float) -> None:
        """Usage since the last priority calculation (CPU-seconds, Slurm's default billing)."""
        self.usage[js.job.queue] = self.usage.get(js.job.queue, 0.0) + self.cpus(js) * max(
            0.0, now - max(js.start, self.last_calc)
        )

    def _calc(self, now: float) -> None:
        """Every PriorityCalcPeriod: decay usage, re-rank accounts (Fair Tree), recompute pending priorities."""
        m = self.m
        at = math.floor(now / m.priority_calc_period_s) * m.priority_calc_period_s
        if at <= self.last_calc or (m.weight_fairshare == 0 and m.weight_age == 0 and m.weight_job_size == 0):
            return
        for js in self.running:
            self._accrue(js, at)
        decay = 0.5 ** ((at - self.last_calc) / m.decay_half_life_s)
        self.usage = {a: u * decay for a, u in self.usage.items()}
        self.last_calc = at
        self.fs = fair_tree(m.fairshare, self.usage)
        for js in self.queue:
            js.prio = self.priority(js, at)
            self._key(js)
        self.queue.sort(key=lambda j: j.key)

    # -- starting jobs ----------------------------------------------------------------------------------------
    def _account(self, js: SlurmJob, sign: int) -> None:
        assert js.pool is not None
        k = (js.job.queue, js.pool.model.gpu_type)
        if sign > 0:
            self.held_by[js.n] = self.eng.gpus_held(js)
        self.held[k] = self.held.get(k, 0.0) + sign * self.held_by[js.n]
        self.qos_limits.account(js.job, js.qos, sign * self.held_by[js.n])

    def over_cap(self, js: SlurmJob, pool: PoolState) -> bool:
        """Held by a GrpTRES cap of its account, or a GPU limit of its QOS (it does not block its partition)."""
        m = pool.model
        per_node = m.slices_per_node if m.exclusive else slices_for(m, js.job.gpus_per_node, js.job.gpu_share)
        gpus = per_node * js.job.nodes / m.slices_per_gpu
        if self.qos_limits.limits and self.qos_limits.over(js.job, js.qos, gpus):
            return True
        caps = self._caps.get(js.job.queue)
        cap = caps.get(m.gpu_type) if caps else None
        if cap is None:
            return False
        return self.held.get((js.job.queue, m.gpu_type), 0.0) + gpus > cap + 1e-9

    def pools_of(self, js: SlurmJob) -> list[PoolState]:
        """The pools of the job's partition (cached on the job: the job list never changes)."""
        if js.pools is None:
            js.pools = [self.eng.pools[n] for n in self.partition(js).pools]
        return js.pools

    def start(self, js: SlurmJob, pool: PoolState, chosen: list[Node], backfilled: bool, now: float) -> None:
        self.dequeue(js)
        self.eng.start(js, pool, chosen, backfilled)
        self.running.append(js)
        self._account(js, +1)

    def begin(self, js: SlurmJob, pool: PoolState, chosen: list[Node], backfilled: bool, now: float) -> None:
        """Start the job, or (nodes to resume among ``chosen``) hold the nodes until they are up."""
        if self.power is not None and any(n.state != UP for n in chosen):
            self.power.begin(js, pool, chosen, backfilled, now)
        else:
            self.start(js, pool, chosen, backfilled, now)

    def unbilled_tail(self, pool: PoolState, end: float) -> float:
        return self.power.unbilled_tail(pool, end) if self.power is not None and self.power.scales(pool) else 0.0

    def holding(self) -> list[SlurmJob]:
        """Jobs out of the queue that hold nodes still resuming (power saving)."""
        return self.power.holding() if self.power is not None else []

    def dequeue(self, js: SlurmJob) -> None:
        if js.state == PENDING:
            self.queue.remove(js)
            js.state = CONFIGURING

    def shape(self, js: SlurmJob) -> tuple:
        """Jobs with the same shape fit, or not, alike (account, pools, nodes, GPUs per node, share)."""
        if not js.key_shape:
            js.key_shape = (js.job.queue, js.job.pool, js.job.nodes, js.job.gpus_per_node, js.job.gpu_share)
            if self.qos_limits.limits:  # QOS GPU limits hold jobs by QOS and user too
                js.key_shape += (js.qos, js.job.user if js.job.user is not None else js.job.id)
        return js.key_shape

    def _main(self, now: float) -> None:
        blocked: set[str] = set()
        capped: set[tuple] = set()
        tested = 0
        every = len(self.eng.pools)
        for js in list(self.queue):
            if tested >= DEFAULT_QUEUE_DEPTH or len(blocked) == every:
                break
            shape = self.shape(js)
            if shape in capped:
                continue
            pools = [p for p in self.pools_of(js) if p.model.name not in blocked]
            if not pools or js.state != PENDING or js.eligible > now:
                continue
            tested += 1
            if all(self.over_cap(js, p) for p in pools):
                capped.add(shape)
                continue  # AssocGrpGRES: waits without holding anyone back
            if self._try_start(js, pools, now) or self._try_preempt(js, pools, now):
                continue
            blocked.update(p.model.name for p in pools)  # lower-priority jobs may not take these nodes

    def _try_start(self, js: SlurmJob, pools: list[PoolState], now: float) -> bool:
        for pool in pools:
            if self.over_cap(js, pool):
                continue
            slices = slices_for(pool.model, js.job.gpus_per_node, js.job.gpu_share)
            chosen = pool.place(js.job.nodes, slices, pool.model.exclusive)
            if chosen is None and self.power is not None and self.power.scales(pool):
                chosen = self.power.place(pool, js.job.nodes, slices, pool.model.exclusive, now)
            if chosen is not None:
                self.begin(js, pool, chosen, False, now)
                return True
        return False

    def victims(self, js: SlurmJob, pool: PoolState) -> list[SlurmJob]:
        """Running jobs on ``pool`` that ``js`` may preempt, in the order Slurm frees them: preempt/qos by the
        victim's QOS priority, then job priority; preempt/partition_prio by the victim's partition PriorityTier, then
        its node count (smaller jobs first); ties in job-list (submit) order."""
        if self.m.preempt_type == "qos":
            targets = set(self.m.qos_preempts.get(js.qos or "", ()))
            if not targets:
                return []
            cands = [r for r in self.running if r.pool is pool and r.qos in targets]
            return sorted(cands, key=lambda r: (self.m.qos_priority.get(r.qos or "", 0), math.floor(r.prio), r.n))
        if self.m.preempt_type == "partition_prio":
            tier = self.partition(js).tier
            cands = [r for r in self.running if r.pool is pool and self.partition(r).tier < tier]
            return sorted(cands, key=lambda r: (self.partition(r).tier, r.job.nodes, r.n))
        return []

    def _try_preempt(self, js: SlurmJob, pools: list[PoolState], now: float) -> bool:
        if not self.m.preempt:
            return False
        ready = js.eligible + self.m.batch_sched_delay_s
        if now < ready:  # the main scheduler preempts for a new batch job only after batch_sched_delay
            if self._wake.get(js.n) != ready:
                self._wake[js.n] = ready
                self.eng.push(ready, TICK, "eligible")
            return False
        for pool in pools:
            if self.over_cap(js, pool):
                continue
            cands = self.victims(js, pool)
            if not cands:
                continue
            slices = slices_for(pool.model, js.job.gpus_per_node, js.job.gpu_share)
            freed: list[SlurmJob] = []
            chosen = None
            for victim in cands:  # free the least important first until the job fits
                for node, take in victim.alloc:
                    node.free += take
                freed.append(victim)
                chosen = pool.place(js.job.nodes, slices, pool.model.exclusive)
                if chosen is not None:
                    break
            for victim in freed:
                for node, take in victim.alloc:
                    node.free -= take
            if chosen is None:
                continue
            names = {n.name for n in chosen}
            for victim in freed:
                if any(n.name in names for n, _ in victim.alloc):
                    self.eng.preempt(victim, requeue=self.m.requeue)
            chosen = pool.place(js.job.nodes, slices, pool.model.exclusive)
            if chosen is not None:
                self.start(js, pool, chosen, False, now)
                return True
        return False


def fair_tree(shares: dict[str, int], usage: dict[str, float]) -> dict[str, float]:
    """Fair Tree over one level of accounts (one user each): rank by level fair-share S/U, highest first;
    factor = rank / accounts, ties sharing the higher rank; an account with no usage ranks first."""
    total_s = sum(shares.values()) or 1
    total_u = sum(usage.get(a, 0.0) for a in shares)
    level = {
        a: (math.inf if total_u <= 0 or usage.get(a, 0.0) <= 0 else (s / total_s) / (usage[a] / total_u))
        for a, s in shares.items()
    }
    ordered = sorted(level.values(), reverse=True)
    n = len(ordered)
    return {a: (n - ordered.index(v)) / n for a, v in level.items()}


__all__ = ["SlurmScheduler", "SlurmJob", "fair_tree", "DONE", "RUNNING"]
