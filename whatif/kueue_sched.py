"""Kueue as rendered (scheduling/kueue.py, kueue_config.py): ClusterQueues with nominal GPU quota per flavor (pool),
borrowing and lending in a cohort, fair sharing by weight, preemption within a queue by priority, reclaim within the
cohort and fair-sharing preemption, BestEffortFIFO or StrictFIFO, gang admission with waitForPodsReady (evict and
requeue with backoff), and topology-aware placement by block on fixed-size pools. Admitted pods then need nodes: the
kube-scheduler places them (best fit) and the autoscaler adds nodes (``autoscale.py``)."""
from __future__ import annotations

from typing import Any

from whatif.cluster import KueueModel, QueueModel, slices_for
from whatif.engine import ADMITTED, PENDING, RUNNING, TICK, Engine, JobState
from whatif.feasible import candidate_pools
from whatif.kueue_preempt import Choice, choose

MAX_ADMISSIONS_PER_PASS = 100_000


class CQ:
    def __init__(self, model: QueueModel):
        self.model = model
        self.pending: list[JobState] = []
        self.usage: dict[str, int] = {p: 0 for p in model.quotas}
        self.admitted: list[JobState] = []
        self.parked: set[int] = set()
        """BestEffortFIFO: workloads that did not fit, left aside until something is released."""
        self.cursor = 0
        """Pending before this index are all parked (or in backoff): the next head is searched from here."""

    def unpark(self) -> None:
        self.parked.clear()
        self.cursor = 0


class KueueScheduler:
    def __init__(self, eng: Engine):
        self.eng = eng
        kueue = eng.cluster.kueue
        assert kueue is not None
        self.k: KueueModel = kueue
        self.cqs = {name: CQ(q) for name, q in eng.cluster.queues.items()}
        self.waiting_pods: list[JobState] = []
        """Admitted workloads whose pods are not all running yet, in admission order."""
        self._up_seen = -1.0
        self._lendable = {p: sum(_lendable(c.model, p) for c in self.cqs.values() if p in c.model.quotas)
                          for p in eng.cluster.pools}
        """Pool -> quota the cohort's queues lend (static: the spec does not change during a run)."""

    # -- the scheduler interface -------------------------------------------------------------------------------
    def pending(self) -> int:
        return sum(len(c.pending) for c in self.cqs.values()) + len(self.waiting_pods)

    def unplaced(self) -> list[JobState]:
        return list(self.waiting_pods)

    def submit(self, js: JobState, now: float) -> None:
        js.value = self.eng.cluster.class_values.get(js.job.priority or "", 0)
        self._enqueue(js)

    def released(self, js: JobState, now: float, requeue: bool) -> None:
        cq = self.cqs[js.job.queue]
        self._unadmit(cq, js)
        for c in self.cqs.values():
            c.unpark()
        if requeue:
            js.order_ts = now  # requeuingStrategy.timestamp: Eviction
            self._enqueue(js)

    def tick(self, now: float, payload: Any) -> None:
        kind, js, token = payload
        if kind == "ready-timeout" and js.state == ADMITTED and js.token == token:
            self._gang_timeout(js, now)
        self.eng.dirty = True

    def schedule(self, now: float) -> None:
        if self.eng.up_gpus != self._up_seen:  # nodes came or went: topology-placed workloads may fit now
            self._up_seen = self.eng.up_gpus
            for c in self.cqs.values():
                c.unpark()
        self._failed: set[tuple] = set()
        self._place(now)
        for _ in range(MAX_ADMISSIONS_PER_PASS):
            if not self._admit_one(now):
                break
        self._place(now)

    # -- queues -----------------------------------------------------------------------------------------------
    def _enqueue(self, js: JobState) -> None:
        js.state = PENDING
        cq = self.cqs[js.job.queue]
        cq.pending.append(js)
        cq.pending.sort(key=lambda j: (-j.value, j.order_ts, j.n))
        cq.cursor = 0

    def _unadmit(self, cq: CQ, js: JobState) -> None:
        if js in cq.admitted:
            cq.admitted.remove(js)
            assert js.pool is not None
            cq.usage[js.pool.model.name] -= self.need(js, js.pool.model.name)
        if js in self.waiting_pods:
            self.waiting_pods.remove(js)

    def need(self, js: JobState, pool: str) -> int:
        m = self.eng.cluster.pools[pool]
        return slices_for(m, js.job.gpus_per_node, js.job.gpu_share) * js.job.nodes

    def _heads(self, now: float) -> list[tuple[CQ, JobState]]:
        out = []
        for cq in self.cqs.values():
            pending = cq.pending
            for i in range(cq.cursor, len(pending)):
                js = pending[i]
                if js.eligible > now or js.n in cq.parked:
                    if cq.model.strict_fifo and js.eligible <= now:
                        break  # StrictFIFO: a head that does not fit blocks the queue
                    if js.eligible <= now and i == cq.cursor:
                        cq.cursor += 1  # parked: never a head again until something is released
                    continue
                out.append((cq, js))
                break
        return out

    def _admit_one(self, now: float) -> bool:
        heads = self._heads(now)
        if not heads:
            return False
        options: list[tuple[tuple, CQ, JobState, Choice]] = []
        parked = False
        for cq, js in heads:
            shape = (cq.model.name, js.job.nodes, js.job.gpus_per_node, js.job.gpu_share, js.job.pool, js.value)
            choice = None if shape in self._failed else choose(self, cq, js)
            if choice is None:
                self._failed.add(shape)  # a later twin (same shape, no higher priority) would not fit either
                cq.parked.add(js.n)
                parked = True
                continue
            share = self.share(cq, choice.pool, self.need(js, choice.pool)) if self.k.fair_sharing else 0.0
            options.append(((choice.borrows, share, -js.value, js.order_ts, js.n), cq, js, choice))
        if not options:
            return parked  # parked heads may uncover the next workload of a BestEffortFIFO queue
        _, cq, js, choice = min(options, key=lambda o: o[0])
        for victim in choice.victims:
            self.eng.preempt(victim, requeue=True)
        self._failed.clear()  # an admission can open preemption for a twin that failed (it may now reclaim from it)
        self._admit(cq, js, choice.pool, now)
        return True

    def _admit(self, cq: CQ, js: JobState, pool: str, now: float) -> None:
        cq.pending.remove(js)
        cq.admitted.append(js)
        cq.usage[pool] += self.need(js, pool)
        js.state, js.pool, js.admitted_at = ADMITTED, self.eng.pools[pool], now
        js.token += 1
        self.waiting_pods.append(js)
        if js.pool.model.block_nodes:  # TAS assigns the nodes at admission (_topology_fits found them free)
            self._place_one(js)
            if js.state == RUNNING:
                return
        if self.k.gang_timeout_s is not None:  # waitForPodsReady covers every workload, one pod or many
            self.eng.push(now + self.k.gang_timeout_s, TICK, ("ready-timeout", js, js.token))

    def _place(self, now: float) -> None:
        """The kube-scheduler: pods of admitted workloads onto nodes, all of a workload's pods or none."""
        for js in list(self.waiting_pods):
            self._place_one(js)

    def _place_one(self, js: JobState) -> None:
        pool = js.pool
        assert pool is not None
        slices = slices_for(pool.model, js.job.gpus_per_node, js.job.gpu_share)
        chosen = pool.place(js.job.nodes, slices, False)
        if chosen is not None:
            self.waiting_pods.remove(js)
            self.eng.start(js, pool, chosen)

    def _gang_timeout(self, js: JobState, now: float) -> None:
        """waitForPodsReady: not all pods running in time -> evicted, requeued after a backoff."""
        cq = self.cqs[js.job.queue]
        self._unadmit(cq, js)
        k = self.k
        js.requeues += 1
        js.eligible = now + min(k.backoff_base_s * 2 ** (js.requeues - 1), k.backoff_max_s)
        js.order_ts = now
        js.pool = None
        self._enqueue(js)
        self.eng.push(js.eligible, TICK, ("backoff", js, js.token))
        for c in self.cqs.values():
            c.unpark()

    # -- cohort arithmetic ------------------------------------------------------------------------------------
    def cohort_room(self, cq: CQ, pool: str, extra: int) -> bool:
        """Can ``cq`` take ``extra`` more slices in ``pool`` beyond its nominal from what the cohort lends?"""
        if self.k.cohort is None:
            return False
        lendable = used = 0
        for c in self.cqs.values():
            q = c.model.quotas.get(pool)
            if q is None:
                continue
            lend = q.nominal if q.lending_limit is None else min(q.lending_limit, q.nominal)
            guaranteed = q.nominal - lend
            lendable += lend
            usage = c.usage[pool] + (extra if c is cq else 0)
            used += max(0, usage - guaranteed)
        return used <= lendable

    def share(self, cq: CQ, pool: str | None = None, extra: int = 0) -> float:
        """Dominant resource share: GPUs borrowed above nominal over what the cohort lends, divided by the weight."""
        best = 0.0
        for name, q in cq.model.quotas.items():
            usage = cq.usage[name] + (extra if name == pool else 0)
            lendable = self._lendable[name]
            if lendable:
                best = max(best, max(0, usage - q.nominal) / lendable)
        return best * 1000 / cq.model.weight

    def pools_for(self, js: JobState) -> list[str]:
        return [p.name for p in candidate_pools(self.eng.cluster, js.job)]


def _lendable(q: QueueModel, pool: str) -> int:
    quota = q.quotas[pool]
    return quota.nominal if quota.lending_limit is None else min(quota.lending_limit, quota.nominal)


__all__ = ["KueueScheduler", "CQ", "RUNNING"]
