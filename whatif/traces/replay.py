"""A ``kind: trace`` workload -> jobs: read the trace, keep the window, map each job's tenant onto a stack queue with
the mapping, and keep what the trace recorded (its queue waits) for a side-by-side comparison."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

from whatif.cluster import ClusterModel
from whatif.model import Job, Workload
from whatif.traces.alibaba import read_openb
from whatif.traces.helios import read_cluster_log
from whatif.traces.philly import read_job_log
from whatif.traces.records import ATTRIBUTION, TraceRecord
from whatif.workload.spec import Trace, TraceFormat, TraceMapping


def read_records(w: Trace, path: Path) -> list[TraceRecord]:
    file = Path(w.path) if Path(w.path).is_absolute() else (path.parent / w.path)
    if w.format == TraceFormat.ALIBABA_OPENB:
        return read_openb(file)
    if w.format == TraceFormat.HELIOS:
        return read_cluster_log(file, w.gpus_per_node or 8)
    return read_job_log(file)


def queue_for(m: TraceMapping, rec: TraceRecord) -> str | None:
    if m.by == "hash":
        names = sorted(m.weights)
        total = sum(m.weights[n] for n in names)
        x = int(hashlib.sha256(rec.id.encode()).hexdigest()[:12], 16) / float(1 << 48) * total
        for n in names:
            x -= m.weights[n]
            if x < 0:
                return n
        return names[-1]
    value = rec.tenant.get(m.by, "")
    return m.queues.get(value, m.default)


def load_trace(w: Trace, path: Path, cluster: ClusterModel) -> Workload:
    records = read_records(w, path)
    window = [r for r in records if not r.carry_in]
    if not window:
        raise ValueError("the trace has no jobs")
    t0 = min(r.submit for r in window)
    end = t0 + w.window_hours * 3600 if w.window_hours else math.inf
    out = Workload(path.stem, "trace", [], w.description, attribution=[ATTRIBUTION[w.format.value]])
    skipped = {"never started in the trace": 0, "no GPU": 0, "tenant not mapped": 0, "zero run time": 0}
    for r in records:
        if not r.carry_in and r.submit > end:
            continue
        if r.start is None or r.end is None:
            skipped["never started in the trace"] += 1
            continue
        if r.gpus_per_node <= 0 and r.gpu_share is None:
            skipped["no GPU"] += 1
            continue
        queue = queue_for(w.mapping, r)
        if queue is None:
            skipped["tenant not mapped"] += 1
            continue
        run = r.end - r.start if not r.carry_in else r.end - t0
        if run <= 0:
            skipped["zero run time"] += 1
            continue
        submit = 0.0 if r.carry_in else r.submit - t0
        prio = w.mapping.priorities.get(r.tenant.get(w.mapping.by, ""))
        out.jobs.append(
            Job(
                id=r.id,
                submit_s=submit,
                queue=queue,
                gpus_per_node=r.gpus_per_node,
                nodes=r.nodes,
                run_s=run,
                time_limit_s=math.ceil(run * w.time_limit_factor / 60) * 60,
                priority=prio,
                pool=w.pool,
                gpu_share=r.gpu_share,
            )
        )
        if r.carry_in:
            out.warm_up.add(r.id)
        else:
            out.recorded_waits[r.id] = max(0.0, r.start - r.submit)
    out.notes += [f"{n} trace jobs left out: {why}" for why, n in skipped.items() if n]
    if out.warm_up:
        out.notes.append(f"{len(out.warm_up)} carry-in jobs start at t=0 and are left out of the wait statistics")
    return out
