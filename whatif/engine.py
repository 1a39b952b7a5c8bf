"""The discrete-event core shared by both scheduler families: a clock and an event heap, job starts and ends, spot
interruptions, node billing and the time series. What is admitted or started, and when, is the scheduler's
(``slurm_sched.py``, ``kueue_sched.py``, chosen by ``run.scheduler_for``); nodes coming and going under Kubernetes
is ``autoscale.py``. The engine implements ``core.Host`` and knows schedulers only by ``core.Scheduler``."""

from __future__ import annotations

import heapq
import math
import random
from typing import Any, Sequence

from stacks.plan.start_time import overhead_s
from whatif.autoscale import Autoscaler
from whatif.cluster import ClusterModel, slices_for
from whatif.core import (
    BLOCK_END,
    DONE,
    END,
    IDLE_CHECK,
    INTERRUPT,
    NEVER,
    NODE_READY,
    PENDING,
    RUNNING,
    SUBMIT,
    TICK,
    JobState,
    Scheduler,
    SchedulerFactory,
)
from whatif.feasible import fitting_pools, never_startable
from whatif.model import DRAIN_LIMIT_S, Job, Sample, SimOptions, SimResult
from whatif.nodes import BOOTING, OFF, UP, Node, PoolState, allocate, release
from whatif.settle import settle

PROGRESS_EVERY_EVENTS = 4096


class Engine:
    def __init__(
        self, cluster: ClusterModel, jobs: Sequence[Job], seed: int, options: SimOptions, scheduler: SchedulerFactory
    ):
        self.cluster, self.options = cluster, options
        self.now = 0.0
        self._heap: list[tuple[float, int, int, Any]] = []
        self._seq = 0
        self.pools = {name: PoolState(m) for name, m in cluster.pools.items()}
        self.spot_rng = random.Random(f"whatif-spot-{seed}")
        self.allocated_gpus = 0.0
        self.up_gpus = 0.0
        self.queue_gpu_s: dict[str, float] = {}
        self.unfinished = 0
        self._progress_events = 0
        """SUBMIT, END, NODE_READY and TICK events in the heap: with none left, nothing pending can ever change."""
        self.samples: list[Sample] = []
        self.preemptions = 0
        self.dirty = False
        self.reclaiming = False
        self.autoscaled = cluster.scheduler != "slurm" and options.nodes_up == "min"
        power = cluster.slurm.power if cluster.slurm is not None else None
        self.power_pools = set(power.pools) if power is not None and options.nodes_up == "min" else set()
        """Slurm pools that follow the queue (power saving, ``slurm_power.py``): they start at minNodes."""
        self.scheduler: Scheduler[Any] = scheduler(self)
        self.jobs: list[JobState] = [
            self.scheduler.new_job(j, i) for i, j in enumerate(sorted(jobs, key=lambda j: (j.submit_s, j.id)))
        ]
        self.autoscaler = Autoscaler(self, self.scheduler)
        self.block_notes: list[str] = []
        """What each capacity block's end did to the run, and a cut run's note (a warning in every format)."""
        self.last_finish = 0.0
        """When a job last ended (the drain limit counts from it)."""
        self.last_saved = 0.0
        """When a stopped job last kept work at a checkpoint: its remaining work shrank, which is progress, so the
        drain limit counts from it as from a job end (a checkpointed job reclaimed over and over still finishes)."""
        self._due_at = -1.0
        self._due: list[JobState] = []  # jobs running as the drain deadline passed (``_running_since``)
        self.cut: str | None = None
        """What cut the run short with work left (``--horizon-hours``, the drain limit); None: it ran to its end."""

    # -- events -----------------------------------------------------------------------------------------------
    def push(self, t: float, kind: int, payload: Any = None) -> None:
        self._seq += 1
        if kind in (SUBMIT, END, NODE_READY, TICK):
            self._progress_events += 1
        heapq.heappush(self._heap, (t, self._seq, kind, payload))

    def run(self) -> SimResult:
        for pool in self.pools.values():
            scales = self.autoscaled or pool.model.name in self.power_pools
            up = pool.model.min_nodes if scales else pool.model.max_nodes
            for node in pool.nodes[:up]:
                self.node_on(pool, node, ready=True)
            if pool.model.drain_s is not None:  # a capacity block: its nodes go before its window ends
                self.push(pool.model.drain_s, BLOCK_END, pool)
        for js in self.jobs:
            js.never = never_startable(self.cluster, js.job)
            own = getattr(self.scheduler, "never_startable", None)  # a fleet's manager knows more (its runtimes)
            if js.never is None and own is not None:
                js.never = own(js.job)
            if js.never is not None:
                js.state = NEVER
            else:
                self.unfinished += 1
                self.push(js.job.submit_s, SUBMIT, js)
        last_submit = max((j.job.submit_s for j in self.jobs), default=0.0)
        horizon = self.options.horizon_s
        end_hint = horizon or last_submit
        cut: float | None = None
        count = 0
        while self._heap:
            t = self._heap[0][0]
            if horizon is not None and t > horizon:
                break
            if horizon is None:
                deadline = max(last_submit, self.last_finish, self.last_saved) + DRAIN_LIMIT_S
                if t > deadline and not self._running_since(deadline):
                    cut = max(deadline, self.now)
                    break
            self.now = t
            while self._heap and self._heap[0][0] == t:
                _, _, kind, payload = heapq.heappop(self._heap)
                if kind in (SUBMIT, END, NODE_READY, TICK):
                    self._progress_events -= 1
                self._dispatch(kind, payload)
                count += 1
            if self.dirty:
                self.dirty = False
                self.scheduler.schedule(t)
                if self.autoscaled:
                    self.autoscaler.scale_up(t)
            self._sample(t)
            if self.options.progress is not None and count % PROGRESS_EVERY_EVENTS < 8:
                self.options.progress(t, end_hint)
            if self.unfinished == 0 or self._progress_events == 0 or self._stranded():
                break
        if self.unfinished == 0 or self._progress_events == 0 or self._stranded():
            return self._result(self.now, True)
        if cut is not None:
            self.cut = f"the what-if's {DRAIN_LIMIT_S / 86400:.0f}-day drain limit"
            self.block_notes.append(self._cut_note(cut))
            return self._result(cut, False)
        assert horizon is not None  # the heap ran dry: no progress event left, so the run ended above
        self.cut = "--horizon-hours"
        return self._result(horizon, False)

    def _running_since(self, t: float) -> bool:
        """A job that was running at ``t`` still runs (it reaches its end or is stopped in finite time). Such jobs
        are found once per ``t`` and only drop out (a restart after ``t`` does not count)."""
        if t != self._due_at:
            self._due_at, self._due = t, [js for js in self.jobs if js.state == RUNNING]
        self._due = [js for js in self._due if js.state == RUNNING and js.start <= t]
        return bool(self._due)

    def _cut_note(self, cut: float) -> str:
        left = [js.job.id for js in self.jobs if js.state not in (DONE, NEVER)]
        names = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        return (
            f"the run was cut at {cut / 3600:,.1f} h with {len(left)} job(s) unfinished ({names}): no job ended "
            f"or kept work at a checkpoint, and none running then could still end, within "
            f"{DRAIN_LIMIT_S / 86400:.0f} days of the last submit, job end or checkpointed stop (jobs requeued or evicted over and over, or waiting for capacity that never comes); it "
            f"is billed as a horizon cut at {cut / 3600:,.1f} h (nodes still up paid to it, no scale-down tail). "
            f"Pass --horizon-hours to choose where the run stops"
        )

    def _dispatch(self, kind: int, payload: Any) -> None:
        if kind == SUBMIT:
            self.scheduler.submit(payload, self.now)
            self.dirty = True
        elif kind == END:
            js, token = payload
            if js.token == token and js.state == RUNNING:
                self._stop(js, requeue=False)
        elif kind == NODE_READY:
            pool, node, epoch = payload
            if node.epoch == epoch and node.state == BOOTING:
                node.state, node.idle_since = UP, self.now
                self.up_gpus += pool.model.gpus_per_node
                self.dirty = True
                if self.autoscaled:
                    self.autoscaler.watch_idle(pool, node, self.now)
        elif kind == IDLE_CHECK:
            self.autoscaler.idle_check(payload, self.now)
        elif kind == INTERRUPT:
            pool, node, epoch = payload
            if node.epoch == epoch and node.state != OFF:
                self._interrupt(pool, node)
        elif kind == TICK:
            self.scheduler.tick(self.now, payload)
        elif kind == BLOCK_END:
            self._block_end(payload)

    # -- nodes ------------------------------------------------------------------------------------------------
    def node_on(self, pool: PoolState, node: Node, ready: bool) -> None:
        if pool.closed:  # a capacity block that has ended gets no node again
            return
        pool.power_on(node, self.now, ready)
        if ready:
            self.up_gpus += pool.model.gpus_per_node
        if not ready:
            self.push(self.now + pool.model.provision_s, NODE_READY, (pool, node, node.epoch))
        rate = pool.model.interruptions_per_node_s if self.options.spot_interruptions else 0.0
        if self.options.spot_interruptions_per_node_month is not None and pool.model.capacity == "spot":
            rate = self.options.spot_interruptions_per_node_month / (30 * 86400)
        if rate > 0:
            self.push(self.now + self.spot_rng.expovariate(rate), INTERRUPT, (pool, node, node.epoch))

    def node_off(self, pool: PoolState, node: Node, bill: bool = True) -> None:
        if node.state == UP:
            self.up_gpus -= pool.model.gpus_per_node
        pool.power_off(node, self.now, bill)

    def _interrupt(self, pool: PoolState, node: Node) -> None:
        pool.usage.interruptions += 1
        for n in list(node.jobs):
            js = self.jobs[n]
            if js.state == RUNNING:
                self.reclaiming = True  # the scheduler may keep the job admitted (Kueue's recovery timeout)
                self.preempt(js, requeue=True)
                self.reclaiming = False
        self.node_off(pool, node)
        # fixed-size pools (Slurm NodeSets, nodes_up=max) get the node back; an autoscaled pool's node group (EC2
        # Auto Scaling group, GKE managed instance group) launches a replacement when the reclaim leaves it below
        # its minimum size, so a node kept at minNodes comes back after the provisioning delay
        on = sum(1 for n in pool.nodes if n.state != OFF)
        if not self.autoscaled or on < pool.model.min_nodes:
            self.node_on(pool, node, ready=False)
        self.dirty = True

    def _block_end(self, pool: PoolState) -> None:
        """A capacity block's end: EC2 terminates its instances (from 30 minutes before the window ends), so the
        jobs on them are killed as a reclaimed node's are (requeued, work since the last checkpoint lost) and the
        pool never gets a node again: no job runs, and nothing is billed, past the block."""
        killed = 0
        for node in pool.nodes:
            for n in list(node.jobs):
                js = self.jobs[n]
                if js.state == RUNNING:
                    killed += 1
                    self.reclaiming = True
                    self.preempt(js, requeue=True, counted=False)
                    self.reclaiming = False
        for node in pool.nodes:
            if node.state != OFF:
                self.node_off(pool, node)
        pool.closed = True
        self.dirty = True
        window = pool.model.window_s or 0.0
        self.block_notes.append(
            f"capacity block {pool.model.name}: its window ends at {window / 3600:,.1f} h; its nodes went at "
            f"{self.now / 3600:,.1f} h (EC2 terminates them 30 minutes before the end), killing {killed} running "
            f"job(s); nothing starts on it afterwards (a queue that keeps quota on it admits jobs there that wait "
            f"for nodes until requeued: remove the block's quota when the block ends)"
        )

    def _stranded(self) -> bool:
        """Every job left fits only capacity blocks that have ended, and none runs: nothing can change (a pool the
        job does not fit, a 1-GPU pool for an 8-GPU job, must not keep the run going on stale events)."""
        closed = {name for name, p in self.pools.items() if p.closed}
        if not closed or self.allocated_gpus > 1e-9:  # a job still runs somewhere
            return False
        for js in self.jobs:
            if js.state in (DONE, NEVER):
                continue
            if js.state == RUNNING or any(p.name not in closed for p in fitting_pools(self.cluster, js.job)):
                return False
        return True

    # -- jobs -------------------------------------------------------------------------------------------------
    def start(self, js: JobState, pool: PoolState, chosen: Sequence[Node], backfilled: bool = False) -> None:
        slices = slices_for(pool.model, js.job.gpus_per_node, js.job.gpu_share)
        js.alloc = allocate(chosen, js.n, slices, pool.model.exclusive)
        js.pool, js.state, js.start, js.backfilled = pool, RUNNING, self.now, backfilled
        js.placed_nodes = tuple(n.name for n in chosen)
        if self.cluster.scheduler != "slurm":
            js.ready_at = self.now + self._start_path(pool, chosen, js.job.nodes)
            if js.running_at < 0:  # the first start whose pods all ran (a pods-ready timeout resets it)
                js.running_at = js.ready_at
        js.starts.append(self.now)
        js.token += 1
        self.allocated_gpus += self.gpus_held(js)
        # the work starts once every pod runs (billed from placement): a job never ends before its pods run
        left = min(js.job.run_s - js.saved_s, js.job.limit_s)
        self.push(self.running_from(js) + left, END, (js, js.token))

    @staticmethod
    def running_from(js: JobState) -> float:
        """When the current start's work begins: all pods running (Kubernetes schedulers: ``ready_at``); under
        Slurm the engine starts a job once its slurmd pods are up and registered, so at once."""
        return max(js.start, js.ready_at)

    def _start_path(self, pool: PoolState, chosen: Sequence[Node], pods: int) -> float:
        """Placement to all pods running: the image pull on nodes that do not have it yet, then admission,
        scheduling, the pod start and, on rack-scale NVLink pools, the job's ComputeDomain start (every IMEX daemon
        Ready before a pod starts) (stacks/plan/start_time.py). The run time starts once it has passed."""
        pull = 0.0
        for n in chosen:
            if n.image_at is None:
                n.image_at = self.now + pool.model.pull_s
            pull = max(pull, n.image_at - self.now)
        return pull + overhead_s(pods, self.cluster.start, pool.model.compute_domains)

    def gpus_held(self, js: JobState) -> float:
        """Physical GPUs a running job holds (whole nodes on exclusive pools, a share on shared ones)."""
        assert js.pool is not None
        m = js.pool.model
        return sum(take for _, take in js.alloc) / m.slices_per_gpu

    def preempt(self, js: JobState, requeue: bool, counted: bool = True) -> None:
        """Evicted by a scheduler or a spot interruption: the work done is lost (the job restarts from the start).
        ``counted=False``: an eviction that is not a preemption (Kueue's pods-ready timeout)."""
        if counted:
            js.preempts += 1
            self.preemptions += 1
        assert js.pool is not None
        ran = self.now - js.start
        worked = max(0.0, self.now - self.running_from(js))  # no work before the pods run, so no checkpoint
        ckpt = js.job.checkpoint_s
        kept = min(math.floor(worked / ckpt) * ckpt, js.job.run_s - js.saved_s) if ckpt else 0.0  # last checkpoint
        js.saved_s += kept
        if kept > 0:
            self.last_saved = self.now
        js.pool.usage.lost_gpu_s += self.gpus_held(js) * (ran - kept)
        self._stop(js, requeue=requeue)

    def _stop(self, js: JobState, requeue: bool) -> None:
        pool = js.pool
        assert pool is not None
        used = self.gpus_held(js) * (self.now - js.start)
        pool.usage.allocated_gpu_s += used
        self.queue_gpu_s[js.job.queue] = self.queue_gpu_s.get(js.job.queue, 0.0) + used
        self.allocated_gpus -= self.gpus_held(js)
        release(js.alloc, js.n)
        for node, _ in js.alloc:
            if node.free == node.cap and node.state == UP:
                node.idle_since = self.now
                if self.autoscaled:
                    self.autoscaler.watch_idle(pool, node, self.now)
        js.alloc = []
        js.end = self.now
        js.token += 1
        js.state = PENDING if requeue else DONE
        if not requeue:
            self.unfinished -= 1
            self.last_finish = self.now
        self.scheduler.released(js, self.now, requeue)
        self.dirty = True

    def _sample(self, t: float) -> None:
        s = Sample(t, round(self.allocated_gpus, 6), self.up_gpus, self.scheduler.pending())
        last = self.samples[-1] if self.samples else None
        if last is not None and (last.allocated_gpus, last.up_gpus, last.pending) == (
            s.allocated_gpus,
            s.up_gpus,
            s.pending,
        ):
            return
        if last is not None and last.t == t:
            self.samples[-1] = s
        else:
            self.samples.append(s)

    def _result(self, end: float, ended: bool) -> SimResult:
        """Settle the bill and the outcomes (``settle.py``)."""
        return settle(self, end, ended)
