"""Kueue's ``waitForPodsReady`` for the simulator's ClusterQueues (``sched.py``), as Kueue v0.19.2 configures it
(apis/config/v1beta2/configuration_types.go ``WaitForPodsReady``): an admitted workload whose pods are not all
running ``timeout`` after admission is evicted and requeued after a backoff; one that loses pods while running (a
spot node reclaimed) keeps its admission, and its quota, while replacement pods start, for ``recoveryTimeout`` (the
timeout when unset; 0 turns the check off), and is evicted and requeued the same way if they do not run by then.
Pods count as running once placed, pulled and started (the engine's start path, ``JobState.ready_at``)."""

from __future__ import annotations

from whatif.cluster import KueueModel
from whatif.core import ADMITTED, RUNNING, TICK, Host
from whatif.kueue.queue import CQ, KueueJob


class PodsReady:
    eng: Host
    k: KueueModel
    cqs: dict[str, CQ]
    waiting_pods: list[KueueJob]
    ready_evicted: list[str]

    def _unadmit(self, cq: CQ, js: KueueJob) -> None:
        raise NotImplementedError

    def _enqueue(self, js: KueueJob) -> None:
        raise NotImplementedError

    def _ready_deadline(self, js: KueueJob, now: float, timeout: float | None) -> None:
        """Its pods must all run by ``now + timeout`` (None or 0: no check)."""
        js.ready_by = now + timeout if timeout else float("inf")
        if timeout:
            self.eng.push(js.ready_by, TICK, ("ready-timeout", js, js.token))

    def _watch_ready(self, js: KueueJob) -> None:
        """Just placed: pods that will not all run by the deadline are evicted at the deadline."""
        if js.ready_at > js.ready_by:
            self.eng.push(js.ready_by, TICK, ("ready-timeout", js, js.token))

    def _recover(self, js: KueueJob, now: float) -> None:
        """Its node was reclaimed: still admitted (quota held), its pods wait for new nodes."""
        js.state = ADMITTED
        self.waiting_pods.append(js)
        self._ready_deadline(js, now, self.k.recovery_timeout_s)

    def _gang_timeout(self, js: KueueJob, now: float) -> None:
        """Pods not all running in time -> evicted, requeued after the backoff (not a preemption: counted and
        warned about on their own, ``ready_warnings``)."""
        cq = self.cqs[js.job.queue]
        self.ready_evicted.append(js.job.id)
        if js.state == RUNNING:  # placed, but its pods still pulling or starting
            self.eng.preempt(js, requeue=True, counted=False)
            if js not in cq.pending:  # a fleet worker's copy: MultiKueue redoes its admission on the manager (the
                return  # host withdrew the copy and requeued the job there); nothing is left to requeue here
            cq.pending.remove(js)
            js.running_at = -1.0
        self._unadmit(cq, js)
        k = self.k
        js.requeues += 1
        js.eligible = now + min(k.backoff_base_s * 2 ** (js.requeues - 1), k.backoff_max_s)
        if k.requeue_timestamp == "Eviction":  # only a PodsReady timeout moves a workload to the back
            js.order_ts = now
        js.pool = None
        self._enqueue(js)
        self.eng.push(js.eligible, TICK, ("backoff", js, js.token))
        for c in self.cqs.values():
            c.unpark()

    def ready_warnings(self) -> list[str]:
        """One warning when waitForPodsReady evicted anything: the start path (a new node, the image pull, the
        pod start) is longer than the timeout, or a reclaimed node's replacement pods are slower than the recovery
        timeout; each eviction throws that start away and requeues the workload after the backoff."""
        if not self.ready_evicted:
            return []
        jobs = sorted(set(self.ready_evicted))
        names = ", ".join(jobs[:5]) + (f" and {len(jobs) - 5} more" if len(jobs) > 5 else "")
        return [
            f"waitForPodsReady evicted {len(self.ready_evicted)} time(s) ({len(jobs)} job(s): {names}): their pods "
            f"were not all running within the timeout ({self.k.gang_timeout_s or 0:g} s; after a spot reclaim the recovery "
            f"timeout), so Kueue evicted and requeued them after the backoff and their start began again: raise "
            f"scheduling.gang.timeoutSeconds above the cold start (the preview's pod start table), or shorten the "
            f"image pull (podStart)"
        ]
