"""MultiKueue over the workers' own Kueue: the manager holds a job against its queue's quota, then offers copies to
workers (AllAtOnce: every worker; Incremental: ``stepSize`` at a time in ``fleet.workers`` order, more every 5
minutes). Each worker runs its own ``KueueScheduler`` over its own pools and queues; a copy is dated when it is
created there. Every worker runs its pass before any copy is withdrawn; the first whose Kueue admitted a copy wins
and the other copies are withdrawn. The manager's queue is Kueue's (``manager.py``): priority
first, then the queue-order timestamp; a job that does not fit preempts lower-priority jobs of its queue there
(``withinClusterQueue: LowerPriority``), and MultiKueue deletes their copies on the workers. A copy evicted on its
worker (preemption, spot, gang timeout) evicts the manager's job: its quota is released and it waits at the manager
again, ordered by that eviction's time. Within one instant the workers answer in a seeded random order (the race
between their Kueues), never list order."""

from __future__ import annotations

import math
import random
from bisect import insort
from dataclasses import replace
from typing import Any, Callable, Sequence

from render.fleet_manager import MANAGER_COHORT
from whatif.core import ADMITTED, DONE, NEVER, PENDING, RUNNING, TICK, Host, JobState
from whatif.fleet.cluster import INCREMENTAL_WIDEN_S, FleetModel
from whatif.cluster import KueueModel
from whatif.kueue.cohort import Admitted, CohortView, Incoming, QueueView
from whatif.kueue.preempt import choose
from whatif.kueue.sched import KueueScheduler
from whatif.fleet.copies import Copy, FleetJob, WorkerHost
from whatif.fleet.reconnect import Reconnect
from whatif.model import Job


class FleetScheduler(Reconnect):
    def __init__(self, eng: Host, fleet: FleetModel, seed: int = 0, outages: Sequence[tuple[str, float, float]] = ()):
        self.eng, self.fleet = eng, fleet
        self.race = random.Random(f"whatif-fleet-race-{seed}")
        """Which worker's Kueue answers first within one instant: a seeded draw over the workers by name, so the
        order of ``fleet.workers`` (which only the Incremental dispatcher reads) never decides a tie."""
        self.workers = {w: KueueScheduler(WorkerHost(eng, fleet.clusters[w], self)) for w in fleet.workers}  # type: ignore[arg-type]
        self.manager = CohortView(
            KueueModel(MANAGER_COHORT, False, None),
            {
                q: QueueView(replace(m, within_queue="LowerPriority", reclaim="Any"))
                for q, m in fleet.manager_quota.items()
            },
        )
        """The manager's ClusterQueues in their cohort: quota per GPU model, borrowing within the rendered limits."""
        self.waiting: list[FleetJob] = []
        """At the manager: not dispatched yet (its queue's quota is full), in Kueue's queue order."""
        self._manager_preempting: FleetJob | None = None
        """The job the manager is preempting now: requeued at its creation time, not at the eviction's."""
        self.dispatched: list[FleetJob] = []
        self.won: dict[str, int] = {w: 0 for w in fleet.workers}
        """Worker -> copies it admitted (a job preempted and readmitted counts again)."""
        self.down: set[str] = set()
        """Workers the manager cannot reach now (``outages``): nothing is dispatched to them (``reconnect.py``)."""
        self.left: dict[str, list[FleetJob]] = {}
        self._converging: FleetJob | None = None
        self.lost_evictions = 0
        """Jobs evicted at the manager because their worker stayed lost past ``workerLostTimeout``."""
        self.outage_no: dict[str, int] = {w: 0 for w in fleet.workers}
        """Worker -> how many outages it has had: a timeout of an earlier outage is stale."""
        self.lost_since: dict[str, float] = {w: 0.0 for w in fleet.workers}
        for w, at, span in outages:
            eng.push(at, TICK, ("down", w, 0))
            eng.push(at + span, TICK, ("up", w, 0))

    @staticmethod
    def factory(
        fleet: FleetModel, seed: int = 0, outages: Sequence[tuple[str, float, float]] = ()
    ) -> Callable[[Any], Any]:
        return lambda eng: FleetScheduler(eng, fleet, seed, outages)

    def new_job(self, job: Job, n: int) -> FleetJob:
        return FleetJob(job, n)

    # -- the manager ------------------------------------------------------------------------------------------
    def submit(self, js: FleetJob, now: float) -> None:
        js.value = self.eng.cluster.class_values.get(js.job.priority or "", 0)
        js.flavor = self.fleet.job_model(js.job)
        insort(self.waiting, js, key=FleetJob.key)

    def _dispatch(self, now: float) -> None:
        for fj in list(self.waiting):
            if fj not in self.waiting:
                continue
            q, flavor = fj.job.queue, fj.flavor
            view = self.manager.queues.get(q)
            if view is None or flavor not in view.nominal:
                continue  # never startable (FleetModel.never_startable): no runtime or no quota for its model
            # Kueue's flavor assigner and preemptor on the manager's cohort: the flavor's quota plus what the cohort
            # lends within borrowingLimit; else preemption in its queue (LowerPriority) or reclaim of what the
            # queue's siblings borrow (Any), the rendered policies
            inc = Incoming(q, fj.value, fj.order_ts, {flavor: math.ceil(fj.job.gpus)})
            choice = choose(self.manager, inc, lambda _: True)
            if choice is None or (choice.mode != "fit" and not choice.victims):
                continue  # BestEffortFIFO at the manager: a smaller job behind it may still fit
            for v in choice.victims:
                self._preempt_at_manager(v.key)
            self.waiting.remove(fj)
            fj.held = Admitted(fj, q, flavor, math.ceil(fj.job.gpus), fj.value, fj.order_ts, now, fj.n)
            view.add(fj.held)
            fj.reserved, fj.reserved_at, fj.nominated = True, now, 0
            self.dispatched.append(fj)
            self._nominate(fj, now)

    def _preempt_at_manager(self, fj: FleetJob) -> None:
        """Kueue preempts the manager's Workload; MultiKueue deletes its copies on the workers, so a copy that runs
        stops there (its work is lost, a preemption) and the job waits at the manager again (quota released at once:
        the manager runs no pods, so nothing is left to terminate there)."""
        copy = fj.copies.get(fj.winner) if fj.winner is not None else None
        self._manager_preempting = fj
        try:
            if copy is not None and copy.state == RUNNING:
                self.eng.preempt(copy, requeue=True)  # -> released(): withdrawn, requeued
            else:
                self._withdraw(fj, keep=None)
                fj.copies.clear()
                fj.winner, fj.nominated, fj.state = None, 0, PENDING
                fj.token += 1
                self._requeue(fj, fj.job.submit_s)
        finally:
            self._manager_preempting = None

    def _nominate(self, fj: FleetJob, now: float) -> None:
        names = self.fleet.workers[fj.nominated : fj.nominated + self.fleet.step_size]
        fj.nominated += len(names)
        for w in names:
            if w not in self.down:  # remoteClientsForAC leaves out a disconnected worker: offered on reconnection
                self._offer(fj, w, now)
        if fj.nominated < len(self.fleet.workers):
            self.eng.push(now + INCREMENTAL_WIDEN_S, TICK, ("widen", fj, fj.token))

    def _offer(self, fj: FleetJob, w: str, now: float) -> None:
        """A copy of ``fj`` created on worker ``w``, where its queue is mirrored and a pool has its GPU model."""
        mirrored = self.fleet.clusters[w].queues.get(f"{w}/{fj.job.queue}")
        if mirrored is None:
            return  # no mirrored queue there: the copy would never be admitted
        pools = [
            p
            for p in mirrored.quotas
            if self.fleet.pool_model.get(p) == fj.flavor and (fj.job.pool is None or p == fj.job.pool)
        ]
        if not pools:
            return  # the runtime's node selector matches no pool of this worker's queue
        # the runtime selects its GPU model's nodes: the copy may use only those pools (the first of several)
        pool = None if len(pools) == len(mirrored.quotas) and len(pools) > 1 else pools[0]
        copy = Copy(replace(fj.job, queue=f"{w}/{fj.job.queue}", pool=pool), fj.n, w, fj)
        copy.starts, copy.preempts = fj.starts, fj.preempts  # one history per job across its copies
        # a new Workload on the worker (cloneForCreate copies spec and labels only): its queue order and its
        # standing against same-priority victims date from its creation there, not from the job's submit
        copy.order_ts = now
        fj.copies[w] = copy
        self.workers[w].submit(copy, now)

    def _withdraw(self, fj: FleetJob, keep: str | None) -> None:
        for w, copy in list(fj.copies.items()):
            if w == keep:
                continue
            self._drop(fj, w, copy)

    def _drop(self, fj: FleetJob, w: str, copy: Copy) -> None:
        """The copy leaves its worker's Kueue (deleted there): out of its queue, its quota released."""
        sched = self.workers[w]
        cq = sched.cqs[copy.job.queue]
        if copy in cq.pending:
            cq.pending.remove(copy)
            cq.unpark()  # the queue changed: its head is searched again from the start
        elif copy.held is not None:
            cq.unpark()  # quota released there: Kueue retries the workloads it set aside
        sched._unadmit(cq, copy)  # noqa: SLF001 - the fleet withdraws its own copies
        copy.state, copy.token = PENDING, copy.token + 1  # its pending ticks (gang timeout) become stale
        del fj.copies[w]

    def _admitted(self, worker: str) -> None:
        """After a worker's pass: a copy it admitted wins unless a worker that answered earlier admitted one."""
        for fj in self.dispatched:
            copy = fj.copies.get(worker)
            if fj.winner is None and copy is not None and copy.state in (ADMITTED, RUNNING):
                fj.winner = worker
                self.won[worker] += 1

    def _withdraw_losers(self) -> bool:
        """After every worker's pass of the instant: the winners' siblings are deleted. MultiKueue creates all copies
        in one reconcile and each worker's Kueue acts on its copy (admits it, or preempts for it) long before the
        manager sees the winner and deletes the rest, so a full worker has preempted by then. True when a deleted
        copy held quota on its worker (that worker may admit others now)."""
        freed = False
        for fj in self.dispatched:
            if fj.winner is not None and len(fj.copies) > 1:
                freed |= any(c.held is not None for w, c in fj.copies.items() if w != fj.winner)
                self._withdraw(fj, keep=fj.winner)
        return freed

    def running(self, js: JobState) -> None:
        """A copy's pods start: the engine tracks it under the fleet job's index from now on."""
        self.eng.jobs[js.n] = js  # type: ignore[attr-defined]

    def released(self, js: JobState, now: float, requeue: bool) -> None:
        assert isinstance(js, Copy)
        fj = js.parent
        sched = self.workers[js.worker]
        sched.released(js, now, requeue=False)
        if self._settled_elsewhere(fj, js, requeue):
            self.eng.dirty = True
            return
        fj.preempts = js.preempts
        self.eng.jobs[js.n] = fj if requeue else js  # type: ignore[attr-defined]
        if requeue:  # evicted on the worker: Kueue evicts the manager's Workload too
            fj.copies.pop(js.worker, None)
            self._withdraw(fj, keep=None)  # copies still queued elsewhere go too: none may run after the eviction
            fj.copies.clear()
            fj.winner, fj.nominated, fj.state = None, 0, PENDING
            fj.token += 1
            self._requeue(fj, fj.job.submit_s if fj is self._manager_preempting else now)
        else:
            fj.state = DONE
            self._release_quota(fj)
            self.dispatched.remove(fj)
        self.eng.dirty = True

    def tick(self, now: float, payload: Any) -> None:
        kind, js, token = payload
        if kind in ("down", "up", "lost"):
            self._outage(now, kind, js, token)
            return
        if kind == "widen":
            if js.winner is None and js.token == token and js.state == PENDING and js in self.dispatched:
                self._nominate(js, now)
            self.eng.dirty = True
            return
        assert isinstance(js, Copy)
        self.workers[js.worker].tick(now, payload)
        fj = js.parent
        if fj.copies.get(js.worker) is js and fj.winner == js.worker and js.state == PENDING:
            self._back_to_manager(fj, now)  # the winning copy's gang timed out on its worker: offered again

    def _back_to_manager(self, fj: FleetJob, now: float) -> None:
        self._withdraw(fj, keep=None)  # out of the worker's queue (and its waiting pods), quota released there
        fj.winner, fj.nominated = None, 0
        fj.token += 1
        self._requeue(fj, now)

    def evicted_unstarted(self, js: "Copy", now: float) -> None:
        """Kueue evicted the copy on its worker before its pods ran: the worker forgets it, and the manager's Workload
        is evicted too (quota released, queued again); nothing ran, so no preemption is counted as lost work."""
        fj = js.parent
        self.workers[js.worker].released(js, now, requeue=False)
        js.state, js.token = PENDING, js.token + 1
        fj.copies.pop(js.worker, None)
        self._withdraw(fj, keep=None)
        fj.copies.clear()
        fj.winner, fj.nominated, fj.state = None, 0, PENDING
        fj.token += 1
        self._requeue(fj, now)

    def _requeue(self, fj: FleetJob, order_ts: float) -> None:
        """An evicted job gives its manager quota back and waits again at the manager to be dispatched anew, in
        Kueue's queue order with ``order_ts`` as its queue-order timestamp (``manager.py``)."""
        if fj in self.dispatched:
            self.dispatched.remove(fj)
        self._release_quota(fj)
        fj.order_ts = order_ts
        insort(self.waiting, fj, key=FleetJob.key)
        self.eng.dirty = True

    def _release_quota(self, fj: FleetJob) -> None:
        if fj.reserved and fj.held is not None:
            self.manager.queues[fj.job.queue].remove(fj.held)
        fj.reserved, fj.held = False, None

    def never_startable(self, job: Job) -> str | None:
        return self.fleet.never_startable(job)

    def schedule(self, now: float) -> None:
        self._dispatch(now)
        order = sorted(self.workers)
        self.race.shuffle(order)
        order = [
            w for w in order if w not in self.down
        ]  # the manager sees nothing a lost worker does  # the workers race for the copies; list order is no tie-break in MultiKueue
        for _ in range(len(order) + 1):  # again while deleted copies free quota (bounded: each pass settles a job)
            for w in order:
                self.workers[w].schedule(now)
                self._admitted(w)
            if not self._withdraw_losers():
                break
        else:
            self.eng.dirty = True  # still settling: the workers look again at the next instant

    def pending(self) -> int:
        return len(self.waiting) + sum(1 for fj in self.dispatched if fj.winner is None)

    def unplaced(self) -> list[Any]:
        return [js for s in self.workers.values() for js in s.unplaced()]

    @property
    def ready_evicted(self) -> list[str]:
        """Every worker's waitForPodsReady evictions of copies (one entry per eviction), for the report."""
        return [j for s in self.workers.values() for j in s.ready_evicted]

    def warnings(self) -> list[str]:
        """Every worker's pods-ready warning (named by worker), and every fleet job not finished at the end of the
        run, named with where it is and why."""
        ready = [
            f"worker {w}: {m.split(', so Kueue evicted', 1)[0]}, so the worker evicted them and the manager "
            "admitted them again at once, ordered by the eviction time (MultiKueue redoes admission on a worker's "
            "eviction: workload.go 441-486), paying for the GPUs from placement to each timeout: raise that "
            "worker's scheduling.gang.timeoutSeconds above its cold start (its preview's pod start table)"
            for w, s in sorted(self.workers.items())
            for m in s.ready_warnings()
        ]
        left = [why for js in self.eng.jobs if (why := self._left_why(js)) is not None]  # type: ignore[attr-defined]
        if not left:
            return ready
        return [*ready, f"{len(left)} fleet job(s) not finished at the end: " + "; ".join(left)]

    def _left_why(self, js: JobState) -> str | None:
        fj = js.parent if isinstance(js, Copy) else js
        if not isinstance(fj, FleetJob) or js.state in (DONE, NEVER) or fj.state == DONE:
            return None
        name, lost = fj.job.id, sorted(self.down)
        where = f"; its copy stays on lost worker {fj.ghost.worker}" if fj.ghost is not None else ""
        if fj in self.waiting:
            return f"{name} waits at the manager for {fj.flavor} quota in queue {fj.job.queue}{where}"
        if fj.winner is not None:
            copy = fj.copies[fj.winner]
            state = "runs" if copy.state == RUNNING else "is admitted, its pods wait for nodes"
            if copy.state == DONE:
                state = "finished unseen (the manager sees it at reconnection or evicts it at workerLostTimeout)"
            return f"{name} {state} on {fj.winner}" + (" (lost)" if fj.winner in self.down else "")
        if fj.copies:
            return f"{name} holds manager quota, queued on {', '.join(sorted(fj.copies))}{where}"
        cause = f"offered to {', '.join(lost)} on reconnection" if lost else "no worker's queue has its pool"
        return f"{name} holds manager quota but no reachable worker has a {fj.flavor} pool ({cause}){where}"
