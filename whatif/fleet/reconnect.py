"""A fleet worker the manager loses and finds again, as MultiKueue handles it in Kueue v0.19.2
(``pkg/controller/admissionchecks/multikueue/workload.go``; line numbers below are that file's).

While a worker is lost the manager can neither create nor delete anything there (``remoteClientsForAC``, 293-306,
leaves it out of the group), so what is on it stays: queued copies, a running copy, a copy that finishes. This model
freezes the lost worker's own Kueue (it admits nothing new; what runs there runs on). On reconnection every job with
something on that worker is reconciled by ``reconcileGroup``:

- step 2 (380-394): a job that is finished at the manager or holds no manager quota has its copies deleted, the
  returned worker's included, finished or running: that work is thrown away;
- step 3 (396-440): a job holding quota whose copy finished finishes now;
- step 6b (571-581) with ``bestMatchByCondition`` (140-155, the earliest ``Admitted`` wins): a job holding quota
  converges on the copy admitted first, the one on the returned worker, and the newer copies are deleted;
- ``nominateAndSynchronizeWorkers`` (913-950): under AllAtOnce every connected worker is nominated on each reconcile
  and a missing copy is created, so a dispatched job no worker has won is offered to the returned worker again
  (Incremental: when that worker is among the job's nominees).

The mixin's attributes are the scheduler's (``sched.FleetScheduler``)."""

from __future__ import annotations

from typing import Any

from whatif.core import DONE, PENDING, RUNNING, TICK
from whatif.fleet.cluster import FleetModel
from whatif.fleet.copies import Copy, FleetJob


class Reconnect:
    eng: Any
    fleet: FleetModel
    down: set[str]
    dispatched: list[FleetJob]
    outage_no: dict[str, int]
    lost_since: dict[str, float]
    """Worker -> when its current (or last) outage began."""
    lost_evictions: int
    left: dict[str, list[FleetJob]]
    """Worker -> jobs the manager evicted after losing that worker, whose copy is still there."""
    _converging: FleetJob | None
    """The job whose newer copies are being deleted now (not an eviction of the job)."""

    # the scheduler's own operations
    def _drop(self, fj: FleetJob, w: str, copy: Copy) -> None: ...
    def _withdraw(self, fj: FleetJob, keep: str | None) -> None: ...
    def _requeue(self, fj: FleetJob, order_ts: float) -> None: ...
    def _release_quota(self, fj: FleetJob) -> None: ...
    def _offer(self, fj: FleetJob, w: str, now: float) -> None: ...
    def evicted_unstarted(self, js: Copy, now: float) -> None: ...
    def _dispatch(self, now: float) -> None: ...

    def _outage(self, now: float, kind: str, target: Any, token: int) -> None:
        self.eng.dirty = True
        if kind == "up":
            self._timeouts_due(target, now)
            self._reconnect(target, now)
        elif kind == "down":
            self.down.add(target)
            self.outage_no[target] += 1
            self.lost_since[target] = now
            for fj in self.dispatched:  # queued copies stay on the lost worker: the manager cannot delete them
                copy = fj.copies.get(target)
                if copy is not None and fj.winner == target:
                    self.eng.push(now + self.fleet.worker_lost_timeout_s, TICK, ("lost", copy, self.outage_no[target]))
        else:
            self._lost(target, token, now)

    def _timeouts_due(self, w: str, now: float) -> None:
        """An outage ending exactly at ``workerLostTimeout`` evicts: Kueue waits only while the remaining time is
        above zero (553-559), and a reconnection waits for its retry back-off, so at the same instant the timeout
        comes first, then the manager's re-reservation of the evicted jobs, then the reconnection."""
        if now < self.lost_since[w] + self.fleet.worker_lost_timeout_s:
            return
        before = self.lost_evictions
        for fj in list(self.dispatched):
            copy = fj.copies.get(w)
            if copy is not None and fj.winner == w:
                self._lost(copy, self.outage_no[w], now)
        if self.lost_evictions > before:
            self._dispatch(now)

    def _lost(self, copy: Copy, token: int, now: float) -> None:
        """Step 6a (545-559): a job whose admitting worker stays unreachable keeps its check Ready, so its manager
        quota, for ``workerLostTimeout`` from when the loss was first seen; then the check goes to Retry and the job
        is evicted and queued again at that time. Its copy is left on the lost worker, running or finished (the
        manager cannot reach it), until the worker comes back."""
        fj, w = copy.parent, copy.worker
        if w not in self.down or self.outage_no[w] != token or fj.copies.get(w) is not copy or fj.winner != w:
            return  # the worker came back in time, or the copy left
        self.lost_evictions += 1
        if copy.state not in (RUNNING, DONE):
            self.evicted_unstarted(copy, now)  # admitted, pods not started: modelled as forgotten there
            return
        del fj.copies[w]
        fj.ghost = copy
        self.left.setdefault(w, []).append(fj)
        if copy.state == DONE:
            self.eng.jobs[fj.n] = fj  # finished where the manager cannot see it: the job is not done
        self._withdraw(fj, keep=None)
        fj.winner, fj.nominated, fj.state = None, 0, PENDING
        fj.token += 1
        self._requeue(fj, now)

    def _settled_elsewhere(self, fj: FleetJob, js: Copy, requeue: bool) -> bool:
        """A copy's end the manager does not act on now (True): a copy left on a lost worker, a copy deleted while
        its job converges on another, or a copy that finished while its worker is lost (the manager sees it at
        reconnection, step 3, or evicts the job at the timeout, step 6a: its quota is held until then)."""
        if js is fj.ghost:
            if requeue:  # deleted at reconnection
                fj.ghost = None
            else:  # finished on the lost worker after the manager gave up on it: the job is not done yet
                self.eng.unfinished += 1
                if self.eng.jobs[js.n] is js:
                    self.eng.jobs[js.n] = fj
            return True
        if fj is self._converging:
            fj.copies.pop(js.worker, None)
            fj.preempts = max(fj.preempts, js.preempts)
            return True
        if not requeue and js.worker in self.down and fj.winner == js.worker:
            self.eng.unfinished += 1  # the manager has not seen it finish
            fj.preempts = js.preempts
            return True
        return False

    def _reconnect(self, w: str, now: float) -> None:
        self.down.discard(w)
        for fj in self.left.pop(w, []):
            g = fj.ghost
            if g is None:
                continue
            if fj.state == DONE or not fj.reserved:  # step 2: deleted, its work thrown away
                self._throw_away(fj, g)
            elif g.state == DONE:  # step 3
                fj.ghost = None
                self._finish(fj, g, now)
            else:  # step 6b: the copy admitted first wins, the newer ones are deleted
                fj.ghost = None
                self._converge(fj, keep=None)
                fj.copies[w], fj.winner = g, w
                g.preempts = fj.preempts
                self.eng.jobs[fj.n] = g
        for fj in list(self.dispatched):
            copy = fj.copies.get(w)
            if copy is not None and copy.state == DONE and fj.winner == w:
                self._finish(fj, copy, now)  # step 3: finished while the worker was lost, seen now
        incremental = self.fleet.step_size < len(self.fleet.workers)
        for fj in self.dispatched:
            if fj.winner is None and w not in fj.copies:
                if not incremental or w in self.fleet.workers[: fj.nominated]:
                    self._offer(fj, w, now)

    def _throw_away(self, fj: FleetJob, g: Copy) -> None:
        if g.state == RUNNING:
            self.eng.preempt(g, requeue=True)  # its work is lost; released() forgets the copy
            return
        fj.ghost = None
        # a finished copy deleted: the run it made counts for nothing
        assert g.pool is not None and g.start >= 0
        g.pool.usage.lost_gpu_s += g.job.gpus * (g.end - g.start)
        self.eng.preemptions += 1
        fj.preempts += 1

    def _converge(self, fj: FleetJob, keep: str | None) -> None:
        """Delete every copy of ``fj`` but ``keep``'s: a running one loses its work."""
        self._converging = fj
        try:
            for w, copy in list(fj.copies.items()):
                if w == keep:
                    continue
                if copy.state == RUNNING:
                    self.eng.preempt(copy, requeue=True)
                else:
                    self._drop(fj, w, copy)
        finally:
            self._converging = None

    def _finish(self, fj: FleetJob, copy: Copy, now: float) -> None:
        """The manager finishes the job from a finished copy; the job ended when that copy did."""
        self._converge(fj, keep=copy.worker)
        fj.copies.clear()
        fj.state = DONE
        self._release_quota(fj)
        if fj in self.dispatched:
            self.dispatched.remove(fj)
        copy.preempts = max(copy.preempts, fj.preempts)
        self.eng.jobs[fj.n] = copy
        self.eng.unfinished -= 1
        self.eng.last_finish = now
