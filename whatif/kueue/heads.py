"""The heads of the ClusterQueues for one Kueue scheduling cycle (``sched.py``), and the parking of heads whose
twins found no flavor this pass (a hot path: a run of such twins is parked in one loop, not one round each)."""

from __future__ import annotations

from typing import Iterable

from whatif.kueue.queue import CQ, KueueJob


def queue_heads(cqs: Iterable[CQ], now: float) -> list[tuple[CQ, KueueJob]]:
    """Each queue's head at ``now``: its first workload neither waiting out a backoff nor parked (a parked head
    blocks a StrictFIFO queue, as a pending preemptor blocks its own)."""
    out = []
    for cq in cqs:
        if cq.head_at == now:
            head = cq.head_js
            if head is not None:
                out.append((cq, head))
            continue
        cq.head_at, cq.head_js = now, None
        pending, parked = cq.pending, cq.parked
        start = cq.cursor
        if cq.scan_at == now and cq.scan_i > start:
            start = cq.scan_i
        for i in range(start, len(pending)):
            js = pending[i]
            waiting = js.eligible > now
            if waiting or js.n in parked:
                if not waiting:
                    if cq.model.strict_fifo or js.n in cq.preempting:
                        break  # StrictFIFO: a head that does not fit blocks the queue
                    if i == cq.cursor:
                        cq.cursor += 1  # parked: never a head again until something is released
                continue
            out.append((cq, js))
            cq.head_js = js
            cq.scan_at, cq.scan_i = now, i
            break
    return out


def park_twins(now: float, heads: list[tuple[CQ, KueueJob]], failed: set[tuple]) -> list[tuple[CQ, KueueJob]]:
    """The queues' heads are all twins of heads that found no flavor: park them and take each queue's next head,
    all queues in step, until one is no such twin (the same as parking and calling ``queue_heads`` again, faster).
    ``failed``: the shapes of heads that found no flavor this pass."""
    at = []
    for cq, js in heads:
        i = (
            cq.scan_i
            if cq.scan_at == now and cq.scan_i < len(cq.pending) and cq.pending[cq.scan_i] is js
            else cq.pending.index(js)
        )
        at.append((cq, i))
    if len(at) == 1:  # one queue with a head (the common case): its run of twins in one tight loop
        return _park_run(now, *at[0], failed)
    while True:
        nxt: list[tuple[CQ, int]] = []
        done = False
        for cq, i in at:
            pending, parked_set = cq.pending, cq.parked
            parked_set.add(pending[i].n)
            cq.head_at, cq.head_js, cq.scan_at, cq.scan_i = now, None, now, i  # no head unless found below
            if cq.model.strict_fifo:
                continue  # StrictFIFO: the parked head blocks the queue
            for j in range(i + 1, len(pending)):
                js = pending[j]
                if js.n in cq.preempting:
                    break  # a preemptor still heads the queue
                if js.eligible > now or js.n in parked_set:
                    continue
                cq.head_js, cq.scan_i = js, j
                nxt.append((cq, j))
                if js.shape not in failed:
                    done = True
                break
        if done or not nxt:
            return [(cq, cq.pending[j]) for cq, j in nxt]
        at = nxt


def _park_run(now: float, cq: CQ, i: int, failed: set[tuple]) -> list[tuple[CQ, KueueJob]]:
    """``park_twins`` for a single queue: park its head at ``i`` and the twins after it, up to its next head
    that is not such a twin (returned) or the end of the queue."""
    pending, parked_set = cq.pending, cq.parked
    parked_set.add(pending[i].n)
    cq.head_at, cq.head_js, cq.scan_at, cq.scan_i = now, None, now, i
    if cq.model.strict_fifo:
        return []  # StrictFIFO: the parked head blocks the queue
    for j in range(i + 1, len(pending)):
        js = pending[j]
        if js.n in cq.preempting:
            return []  # a preemptor still heads the queue
        if js.eligible > now or js.n in parked_set:
            continue
        if js.shape in failed:
            parked_set.add(js.n)
            cq.scan_i = j
            continue
        cq.head_js, cq.scan_i = js, j
        return [(cq, js)]
    return []
