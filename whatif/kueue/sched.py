"""Kueue as rendered (render/kueue.py, kueue_config.py): ClusterQueues with nominal GPU quota per flavor (pool),
borrowing and lending in a cohort, fair sharing by weight, preemption within a queue by priority, reclaim within the
cohort and fair-sharing preemption, BestEffortFIFO or StrictFIFO, gang admission with waitForPodsReady (evict and
requeue with backoff), and topology-aware placement by block on fixed-size pools. Admitted pods then need nodes: the
kube-scheduler places them (best fit) and the autoscaler adds nodes (``autoscale.py``)."""

from __future__ import annotations

from bisect import insort
from typing import Any, Sequence

from whatif.cluster import KueueModel, slices_for
from whatif.core import ADMITTED, PENDING, RUNNING, TICK, Host, JobState
from whatif.feasible import candidate_pools
from whatif.kueue.audit import AdmissionAudit, held
from whatif.kueue.cohort import Admitted, CohortView, Incoming
from whatif.kueue.heads import park_twins, queue_heads
from whatif.kueue.cycle import FIT, NO_FIT, PREEMPTING, Cycle, Entry
from whatif.kueue.loops import PreemptionLog
from whatif.kueue.preempt import NO_CANDIDATES, choose
from whatif.kueue.queue import NEVER, CQ, KueueJob, queue_order
from whatif.kueue.ready import PodsReady
from whatif.model import Job
from whatif.nodes import UP, PoolState

MAX_ADMISSIONS_PER_PASS = 100_000
EVICTION_S = 30.0
"""A preempted workload's pods are gone (its quota released, the preemptor admissible) after Kubernetes' default
terminationGracePeriodSeconds (30 s, Pod API reference); a preemption loop (``loops.py``) costs 30 s a turn."""


class KueueScheduler(PodsReady):
    def __init__(self, eng: Host):
        self.eng = eng
        kueue = eng.cluster.kueue
        assert kueue is not None
        self.k: KueueModel = kueue
        self.cqs = {name: CQ(q) for name, q in eng.cluster.queues.items()}
        self.view = CohortView(kueue, dict(self.cqs), topology=self._topology_fits)
        self._placing: KueueJob | None = None
        self.waiting_pods: list[KueueJob] = []  # admitted, pods not all running yet, in admission order
        self.ready_evicted: list[str] = []  # jobs evicted by waitForPodsReady, one entry per eviction
        self._tas = [p for p in eng.pools.values() if p.model.block_nodes]
        self._tas_seen: tuple = ()
        self._up_seen = -1.0
        self._now = 0.0
        self._failed: set[tuple] = set()
        self._evicting: KueueJob | None = None  # the victim ``preempt`` stops: ``released`` keeps its quota
        self._cycle_undo: list[tuple[str, str, int]] = []  # (queue, flavor, slices) to add back as a cycle ends
        self.loops = PreemptionLog()
        self.audit: list[AdmissionAudit] | None = None
        """Set to a list to record every admission (``kueue/audit.py``, for the tests); None: nothing recorded."""
        self._held_at_cycle: dict[str, dict[str, int]] = {}

    def new_job(self, job: Job, n: int) -> KueueJob:
        return KueueJob(job, n)

    # -- the scheduler interface -------------------------------------------------------------------------------
    def pending(self) -> int:
        return sum(len(c.pending) for c in self.cqs.values()) + len(self.waiting_pods)

    def unplaced(self) -> list[KueueJob]:
        return list(self.waiting_pods)

    def unbilled_tail(self, pool: PoolState, end: float) -> float:
        return 0.0  # Kubernetes pools scale with the node autoscaler (the engine bills its tail)

    def warnings(self) -> list[str]:
        return self.loops.warnings() + self.ready_warnings()

    def submit(self, js: KueueJob, now: float) -> None:
        js.value = self.eng.cluster.class_values.get(js.job.priority or "", 0)
        j = js.job
        js.shape = (j.queue, j.nodes, j.gpus_per_node, j.gpu_share, j.pool, js.value)
        self._enqueue(js)

    def released(self, js: KueueJob, now: float, requeue: bool) -> None:
        cq = self.cqs[js.job.queue]
        if js is self._evicting:  # preempted: its quota stays reserved until its pods are gone ("evicted" tick)
            if js in self.waiting_pods:
                self.waiting_pods.remove(js)
        elif self.eng.reclaiming and js.held is not None:  # spot reclaim: admitted, quota held, pods to replace
            self._recover(js, now)
            return
        else:
            self._unadmit(cq, js)
            for c in self.cqs.values():
                c.unpark()
        if requeue:  # preempted or its node went away: back in the queue at its creation time (Kueue's queue order)
            self._enqueue(js)

    def tick(self, now: float, payload: Any) -> None:
        kind, js, token = payload
        if kind == "ready-timeout" and js.state in (ADMITTED, RUNNING) and js.token == token:
            self._gang_timeout(js, now)
        elif kind == "evicted" and js.held is not None and js.held.evicted:  # its pods are gone: quota released
            self.released(js, now, False)
        self.eng.dirty = True

    def schedule(self, now: float) -> None:
        if self.eng.up_gpus != self._up_seen and self._tas:
            # nodes came or went; those of a topology-placed (TAS) pool may let its workloads fit now: Kueue's TAS
            # flavor controller retries inadmissible workloads on their node events, other pools' nodes do not
            self._up_seen = self.eng.up_gpus
            tas_up = self._tas_nodes_up()
            if tas_up != self._tas_seen:
                self._tas_seen = tas_up
                for c in self.cqs.values():
                    c.unpark()
        self._failed = set()
        self._place(now)
        for _ in range(MAX_ADMISSIONS_PER_PASS):
            if not self._cycle(now):
                break
        self._place(now)

    def _tas_nodes_up(self) -> tuple:
        return tuple(tuple(n.index for n in p.nodes if n.state == UP) for p in self._tas)

    # -- queues -----------------------------------------------------------------------------------------------
    def _enqueue(self, js: KueueJob) -> None:
        js.state = PENDING
        cq = self.cqs[js.job.queue]
        cq.head_at = NEVER
        insort(cq.pending, js, key=queue_order)  # the list is kept in this order (keys are unique: n)
        cq.cursor = 0
        cq.scan_at = NEVER

    def _unadmit(self, cq: CQ, js: KueueJob) -> None:
        if js.held is not None:
            cq.remove(js.held)
            js.held = None
        if js in self.waiting_pods:
            self.waiting_pods.remove(js)

    def need(self, js: KueueJob, pool: str) -> int:
        m = self.eng.cluster.pools[pool]
        return slices_for(m, js.job.gpus_per_node, js.job.gpu_share) * js.job.nodes

    def _cycle(self, now: float) -> bool:
        """One Kueue scheduling cycle (``kueue_cycle``) over the queues' heads; False when it changed nothing."""
        failed = self._failed
        heads = queue_heads(self.cqs.values(), now)
        if not heads:
            return False
        parked = False
        for _, js in heads:
            if js.shape not in failed:
                break
        else:  # heads that are all twins of heads that found no flavor: park them, take the next ones
            parked = True
            heads = park_twins(now, heads, failed)
            if not heads:
                return parked
        entries: list[Entry] = []
        no_fit: list[tuple[CQ, KueueJob]] = []
        if self.audit is not None:
            self._held_at_cycle = held(self.cqs)
        for i, (cq, js) in enumerate(heads):
            if js.shape in failed:
                no_fit.append((cq, js))
                continue
            inc = self._incoming(cq, js)
            choice = choose(self.view, inc, _any_pool)
            if choice is None:  # NoFit: inadmissible whatever the cycle does, and nothing to decide for the others
                no_fit.append((cq, js))
                continue
            entries.append(Entry(js, inc, choice, i))  # the cycle reads inc.need[choice.pool] only
        changed = parked or bool(no_fit)
        if entries and all(e.choice is not None and e.choice.mode == NO_CANDIDATES for e in entries):
            # every entry is a preemption without candidates: each is inadmissible whatever the others do (the
            # quota such an entry reserves only holds off entries that could be admitted), so no cycle to run
            no_fit.extend((self.cqs[e.inc.queue], e.key) for e in entries)
        elif entries:
            self._now = now
            self._cycle_undo = []
            try:
                done = Cycle(self.view, self).run(entries)
            finally:
                for queue, flavor, slices in self._cycle_undo:
                    self.view.queues[queue].usage[flavor] += slices
                self._cycle_undo = []
            for e in done:
                if e.outcome == NO_FIT:
                    no_fit.append((self.cqs[e.inc.queue], e.key))
                elif e.outcome in (FIT, PREEMPTING):
                    changed = True
        for cq, js in no_fit:
            self._park(cq, js)
        return changed or bool(no_fit)

    def _park(self, cq: CQ, js: KueueJob) -> None:
        """Inadmissible until something is released; parked heads may uncover the next workload of a BestEffortFIFO
        queue. A later twin (same shape, no higher priority) would not fit either."""
        self._failed.add(js.shape)
        cq.parked.add(js.n)
        cq.head_at = NEVER

    # -- kueue_cycle.Apply --------------------------------------------------------------------------------------
    def focus(self, entry: Entry) -> None:
        self._placing = entry.key  # topology checks are for this workload

    def admit(self, entry: Entry) -> None:
        assert entry.choice is not None
        js = entry.key
        self._failed.clear()  # an admission can open preemption for a twin that failed (it may now reclaim from it)
        self._admit(self.cqs[entry.inc.queue], js, entry.choice.pool, self._now)

    def preempt(self, entry: Entry) -> None:
        """scheduler.go processEntry, Preempt mode: evict the victims not yet being evicted; the preemptor is not
        admitted but heads its queue until their pods are gone and their quota released (its own is held this cycle)."""
        assert entry.choice is not None
        now, js = self._now, entry.key
        for victim in entry.choice.victims:
            if victim.evicted:
                continue  # IssuePreemptions counts a workload being evicted as preempted, evicts nothing
            evicted = victim.key
            victim.evicted, self._evicting = True, evicted
            self.eng.preempt(evicted, requeue=True)
            self._evicting = None
            self.loops.record(entry.inc.queue, evicted.job.id, victim.queue, victim.flavor)
            evicted.eligible = now + EVICTION_S  # back in the queue once its pods are gone
            self.eng.push(evicted.eligible, TICK, ("evicted", evicted, evicted.token))
        for victim in entry.choice.victims:  # for the rest of this cycle the victims count as gone ...
            self.view.queues[victim.queue].usage[victim.flavor] -= victim.slices
            self._cycle_undo.append((victim.queue, victim.flavor, victim.slices))
        pool, need, cq = entry.choice.pool, entry.inc.need[entry.choice.pool], self.cqs[entry.inc.queue]
        cq.usage[pool] += need  # ... and the preemptor's quota as taken
        self._cycle_undo.append((entry.inc.queue, pool, -need))
        cq.parked.add(js.n)  # pending preemption: retried once quota is released (the "evicted" tick unparks),
        cq.preempting.add(js.n)  # and until then still its queue's head
        cq.head_at = NEVER

    def _admit(self, cq: CQ, js: KueueJob, pool: str, now: float) -> None:
        if js.held is not None:  # readmitted in the instant its eviction ends: the old reservation goes first
            self._unadmit(cq, js)
        cq.pending.remove(js)
        cq.head_at = cq.scan_at = NEVER
        js.held = Admitted(js, cq.model.name, pool, self.need(js, pool), js.value, js.order_ts, now, js.n)
        cq.add(js.held)
        if self.audit is not None:
            self.audit.append(
                AdmissionAudit(
                    now,
                    js.job.id,
                    cq.model.name,
                    pool,
                    js.held.slices,
                    self._held_at_cycle,
                    held(self.cqs, evicting=False),
                )
            )
        js.state, js.pool, js.admitted_at = ADMITTED, self.eng.pools[pool], now
        js.token += 1
        self.waiting_pods.append(js)
        self._ready_deadline(js, now, self.k.gang_timeout_s)  # waitForPodsReady: every workload, one pod or many
        if js.pool.model.block_nodes:  # TAS assigns the nodes at admission (_topology_fits found them free)
            self._place_one(js)

    def _place(self, now: float) -> None:
        """The kube-scheduler: pods of admitted workloads onto nodes, all of a workload's pods or none."""
        for js in list(self.waiting_pods):
            self._place_one(js)

    def _place_one(self, js: KueueJob) -> None:
        pool = js.pool
        assert pool is not None
        slices = slices_for(pool.model, js.job.gpus_per_node, js.job.gpu_share)
        chosen = pool.place(js.job.nodes, slices, False)
        if chosen is not None:
            self.waiting_pods.remove(js)
            self.eng.start(js, pool, chosen)
            self._watch_ready(js)

    # -- flavor assignment ------------------------------------------------------------------------------------
    def _incoming(self, cq: CQ, js: KueueJob) -> Incoming:
        """The head as the flavor assigner sees it (and the workload topology checks are for, from now on)."""
        needs = js.needs
        if needs is None:  # the job and the pools never change: its candidate flavors are computed once
            needs = js.needs = {p: self.need(js, p) for p in self.pools_for(js) if self._nodes_fit(js, p)}
        self._placing = js
        return Incoming(cq.model.name, js.value, js.order_ts, needs)

    def _nodes_fit(self, js: KueueJob, pool: str) -> bool:
        """Kueue counts quota only, but a flavor whose nodes are too small never runs the pods (its node selector
        and pod requests would leave them Pending), so such a flavor is not a real choice."""
        m = self.eng.pools[pool].model
        return (
            slices_for(m, js.job.gpus_per_node, js.job.gpu_share) <= m.slices_per_node and js.job.nodes <= m.max_nodes
        )

    def _topology_fits(self, pool: str, need: int, gone: Sequence[Admitted]) -> bool:
        """TAS (fixed-size pools placed by block): Kueue finds the nodes at admission, so the gang must fit the free
        nodes once ``gone`` (victims being considered) has released its nodes. Other pools: quota only."""
        state = self.eng.pools[pool]
        js = self._placing
        if not state.model.block_nodes or js is None:
            return True
        freed = [(node, take) for w in gone for node, take in w.key.alloc if w.flavor == pool]
        for node, take in freed:
            node.free += take
        try:
            slices = slices_for(state.model, js.job.gpus_per_node, js.job.gpu_share)
            return state.place(js.job.nodes, slices, False) is not None
        finally:
            for node, take in freed:
                node.free -= take

    def pools_for(self, js: JobState) -> list[str]:
        return [p.name for p in candidate_pools(self.eng.cluster, js.job)]


def _any_pool(pool: str) -> bool:
    return True  # KueueJob.needs holds only the pools whose nodes can hold the job


__all__ = ["KueueScheduler", "KueueJob", "CQ", "RUNNING"]
