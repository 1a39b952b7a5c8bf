"""A parametric profile -> jobs: per queue, arrivals (Poisson or evenly spaced, optionally diurnal), a size mix, a run-
time distribution and a priority mix. Each queue draws from its own seeded stream, so adding a queue leaves the jobs
of the others unchanged."""

from __future__ import annotations

import math
import random

from whatif.model import Job
from whatif.workload.spec import ArrivalProcess, Duration, DurationKind, Profile, QueueProfile

DAY_S = 86400.0


def rate_at(qp: QueueProfile, t: float) -> float:
    """Arrivals per second at time t."""
    base = qp.arrivals.per_hour / 3600.0
    d = qp.arrivals.diurnal
    if d is None:
        return base
    phase = 2 * math.pi * ((t / 3600.0 - d.peak_hour) / 24.0)
    return max(0.0, base * (1 + d.amplitude * math.cos(phase)))


def arrivals(qp: QueueProfile, end_s: float, rng: random.Random) -> list[float]:
    peak = qp.arrivals.per_hour / 3600.0 * (1 + (qp.arrivals.diurnal.amplitude if qp.arrivals.diurnal else 0.0))
    out: list[float] = []
    t = 0.0
    if qp.arrivals.process == ArrivalProcess.UNIFORM:
        while True:
            t += 1.0 / max(rate_at(qp, t), peak * 1e-3)
            if t >= end_s:
                return out
            out.append(t)
    while True:  # Poisson by thinning: candidates at the peak rate, each kept with probability rate(t) / peak
        t += rng.expovariate(peak)
        if t >= end_s:
            return out
        if rng.random() * peak <= rate_at(qp, t):
            out.append(t)


def run_seconds(d: Duration, rng: random.Random) -> float:
    median = d.median_minutes * 60.0
    if d.distribution == DurationKind.FIXED:
        value = median
    elif d.distribution == DurationKind.EXPONENTIAL:
        value = rng.expovariate(1.0 / median)
    else:
        value = median * math.exp(d.sigma * rng.gauss(0.0, 1.0))
    return max(1.0, min(round(value), d.max_hours * 3600.0))


def generate(profile: Profile, seed: int) -> list[Job]:
    jobs: list[Job] = []
    end_s = profile.hours * 3600.0
    for qi, qp in enumerate(profile.queues):
        rng = random.Random(f"whatif-{seed}-{qi}-{qp.queue}")
        sizes = [s.weight for s in qp.sizes]
        prios = [p.weight for p in qp.priorities]
        for k, t in enumerate(arrivals(qp, end_s, rng)):
            size = rng.choices(qp.sizes, weights=sizes)[0]
            prio = rng.choices(qp.priorities, weights=prios)[0].name if qp.priorities else None
            run = run_seconds(qp.duration, rng)
            jobs.append(
                Job(
                    id=f"{qp.queue}-{qi}-{k:05d}",
                    submit_s=round(t, 3),
                    queue=qp.queue,
                    gpus_per_node=size.gpus,
                    nodes=size.nodes,
                    run_s=run,
                    time_limit_s=math.ceil(run * qp.time_limit_factor / 60.0) * 60.0,
                    priority=prio,
                    pool=qp.pool,
                    gpu_share=size.gpu_share,
                    checkpoint_s=qp.checkpoint_minutes * 60 if qp.checkpoint_minutes else None,
                )
            )
    jobs.sort(key=lambda j: (j.submit_s, j.id))
    return jobs
