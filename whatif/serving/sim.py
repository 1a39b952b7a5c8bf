"""Serving and training on the same pools, minute by minute (``whatif/serving/queue.py`` is the latency model).

Per minute: arrivals at peak × the hour's share (``traffic.dailyProfile``); each service's ready replicas serve at the
measured rate of its evidence row; KEDA's triggers decide the replica count (waiting requests and completed requests/s
per replica, the HPA's AverageValue; KV-cache usage from Little's law, the HPA's Value; each within the HPA's 10 %
tolerance), scale-up at once and scale-down only after the
cooldown window; a new replica serves after the replica-start estimate (``stacks/plan/serving.py``). Training is
backlogged: it runs whole jobs on every GPU its nominal quota and what it may borrow from serving's idle, lent quota
allow. When serving needs a GPU training borrowed, Kueue's ``reclaimWithinCohort`` preempts the newest borrowing job
in the admission cycle the serving pod is created in; its GPUs are free after the job's termination grace period, and
the work since its last checkpoint is lost. Pure."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from catalog import Cloud
from catalog.serving import ThroughputRow
from stacks.plan.billing import pool_billing
from stacks.plan.facts import PoolFacts
from stacks.plan.serving import (
    Evidence,
    evidence,
    kv_tokens_per_replica,
    model_card,
    replica_start,
    slo_margin,
    unrendered_metrics_source,
)
from stacks.plan.serving_autoscale import desired_replicas
from stacks.spec.serving import Service
from stacks.spec.stack import NodePool, StackSpec
from whatif.serving.queue import step

_Sim = tuple[Service, Evidence, "ServiceResult"]
"""One simulated service: its spec, the measured run it is sized by, its result so far."""


@dataclass(frozen=True)
class TrainingLoad:
    pool: str
    gpus_per_job: int
    checkpoint_minutes: int = 30
    termination_grace_seconds: int = 30


@dataclass
class _Job:
    gpus: int
    start: int
    borrowed: bool


@dataclass
class _Replica:
    ready_at: int
    """Minute from which it serves."""


@dataclass
class _State:
    replicas: list[_Replica]
    warm_s: float
    """Replica start on a running node (GPUs reclaimed from training, or a fixed-size pool)."""
    cold_s: float
    kv_tokens: float
    """KV-cache tokens one replica holds (memory budget − weights)."""
    backlog: float = 0.0
    history: list[int] = field(default_factory=list)


@dataclass
class ServiceResult:
    name: str
    evidence: str
    minutes: int = 0
    ttft_ok: int = 0
    tpot_ok: int = 0
    requests: float = 0.0
    served: float = 0.0
    gpu_minutes: float = 0.0
    worst_ttft_s: float = 0.0
    replicas_max_seen: int = 0
    replicas_by_minute: list[int] = field(default_factory=list)
    """Replicas (starting or serving) at the end of each simulated minute."""
    scale_ups: int = 0
    reclaims: int = 0
    replica_start_s: float = 0.0
    """A replica on GPUs reclaimed from training: grace + pod start + image + weights."""
    usd_per_gpu_hour: float | None = None
    slo_margin: float | None = None
    """How far the SLO is above the evidence row's measured p99s (``stacks/plan/serving.slo_margin``)."""
    scale_up_events: list[tuple[int, int, bool]] = field(default_factory=list)
    """(minute decided, minute ready, on reclaimed GPUs) per replica added."""

    @property
    def ttft_attainment(self) -> float:
        return self.ttft_ok / self.minutes if self.minutes else 0.0

    @property
    def tpot_attainment(self) -> float:
        return self.tpot_ok / self.minutes if self.minutes else 0.0

    def usd_per_million_output_tokens(self, output_tokens: int) -> float | None:
        if self.usd_per_gpu_hour is None or self.served == 0:
            return None
        return self.gpu_minutes / 60 * self.usd_per_gpu_hour / (self.served * output_tokens) * 1e6


@dataclass
class PoolResult:
    pool: str
    gpus: int
    minutes: int = 0
    serving_gpu_minutes: float = 0.0
    training_gpu_minutes: float = 0.0
    lost_gpu_minutes: float = 0.0
    preempted_jobs: int = 0

    @property
    def utilization(self) -> float:
        return (
            (self.serving_gpu_minutes + self.training_gpu_minutes) / (self.gpus * self.minutes) if self.minutes else 0
        )

    @property
    def training_utilization(self) -> float:
        return self.training_gpu_minutes / (self.gpus * self.minutes) if self.minutes else 0.0


@dataclass
class SimResult:
    hours: int
    services: list[ServiceResult] = field(default_factory=list)
    pools: list[PoolResult] = field(default_factory=list)
    no_evidence: list[str] = field(default_factory=list)
    """Services not simulated: no measured row, so their capacity is unknown (never guessed)."""
    fixed_at_min: str | None = None
    """Why the autoscaler was not simulated (its metric source is not one gpu-cluster fills and grants): every
    service runs at ``replicas.min``, as KEDA would leave it reading nothing."""


def _quota(spec: StackSpec, pool: str) -> tuple[int, int | None]:
    """Training's nominal GPUs in ``pool`` and the most it may borrow there (None: no limit)."""
    sched = spec.scheduling
    if sched is None:
        return 0, 0
    nominal, limit = 0, 0
    unlimited = False
    for queue in sched.queues:
        for q in queue.quotas:
            if q.pool == pool:
                nominal += q.gpus
                if q.borrowing_limit is None:
                    unlimited = True
                else:
                    limit += q.borrowing_limit
    return nominal, (None if unlimited else limit) if sched.cohort is not None else 0


def simulate(
    spec: StackSpec,
    facts: dict[str, PoolFacts],
    training: list[TrainingLoad],
    hours: int = 24,
    rows: tuple[ThroughputRow, ...] | None = None,
) -> SimResult:
    out = SimResult(hours)
    minutes = hours * 60
    serving = spec.serving
    if serving is None:
        return out
    out.fixed_at_min = unrendered_metrics_source(Cloud(spec.cloud), serving, spec.project, spec.region, spec.account_id)
    pools = {p.name: p for p in spec.node_pools}
    sims: list[tuple[Service, Evidence, ServiceResult]] = []
    for svc in serving.services:
        ev = evidence(svc, facts[svc.pool].machine.gpu_model, rows)
        if ev is None:
            out.no_evidence.append(svc.name)
            continue
        # billed as the preview bills the pool (a reservation's or block's rate, not only the list price)
        rate = pool_billing(facts[svc.pool], pools[svc.pool]).usd_per_node_hour
        gpus = facts[svc.pool].machine.gpus
        res = ServiceResult(
            svc.name,
            ev.row.cite(),
            usd_per_gpu_hour=rate / gpus if rate is not None and gpus else None,
            slo_margin=slo_margin(svc, ev),
        )
        sims.append((svc, ev, res))
        out.services.append(res)
    for pool_name in dict.fromkeys([s.pool for s, _, _ in sims] + [t.pool for t in training]):
        f = facts[pool_name]
        pool_gpus = f.machine.gpus * f.max_nodes
        load = next((t for t in training if t.pool == pool_name), None)
        here = [x for x in sims if x[0].pool == pool_name]
        out.pools.append(
            _simulate_pool(spec, pools[pool_name], f, pool_gpus, here, load, minutes, out.fixed_at_min is not None)
        )
    return out


def _simulate_pool(
    spec: StackSpec,
    pool: NodePool,
    f: PoolFacts,
    pool_gpus: int,
    sims: list[_Sim],
    load: TrainingLoad | None,
    minutes: int,
    fixed_at_min: bool = False,
) -> PoolResult:
    res = PoolResult(pool.name, pool_gpus, minutes)
    nominal, borrow_limit = _quota(spec, pool.name)
    serving_quota = sum(s.replicas.max * s.gpus_per_replica for s, _, _ in sims)
    serving_min = sum(s.replicas.min * s.gpus_per_replica for s, _, _ in sims)
    lending_limit = serving_quota - serving_min
    fixed = pool.min_nodes == pool.max_nodes
    jobs: list[_Job] = []
    grace_min = math.ceil(load.termination_grace_seconds / 60) if load else 0
    state: dict[str, _State] = {}
    last_reclaim = -1
    cloud = Cloud(spec.cloud)
    for svc, ev, r in sims:
        card = model_card(svc)
        assert card is not None  # a service with evidence names a catalog model
        warm = replica_start(cloud, pool, svc, card, node_running=True)
        cold = replica_start(cloud, pool, svc, card, node_running=fixed)
        r.replica_start_s = (load.termination_grace_seconds if load else 0) + warm.total_s
        kv_tokens = kv_tokens_per_replica(svc, card, f.machine.gpu_memory_gib_per_gpu)
        state[svc.name] = _State([_Replica(0) for _ in range(svc.replicas.min)], warm.total_s, cold.total_s, kv_tokens)
    assert spec.serving is not None
    autoscaling = spec.serving.autoscaling
    cooldown_s = autoscaling.cooldown_seconds
    for t in range(minutes):
        hour = (t // 60) % 24
        # serving: arrivals, latency, autoscaling
        for svc, ev, r in sims:
            st = state[svc.name]
            share = svc.traffic.daily_profile[hour] if svc.traffic.daily_profile else 1.0
            lam = svc.traffic.peak_requests_per_second * share
            ready = sum(1 for x in st.replicas if x.ready_at <= t)
            m = step(
                st.backlog,
                lam,
                ready * ev.requests_per_s_per_replica,
                ev.row.p99_ttft_ms / 1000,
                ev.row.p99_tpot_ms / 1000,
            )
            st.backlog = m.backlog
            r.minutes += 1
            r.requests += lam * 60
            r.served += m.served
            r.ttft_ok += m.ttft_p99_s * 1000 <= svc.slo.ttft_p99_ms
            r.tpot_ok += m.tpot_p99_s * 1000 <= svc.slo.tpot_p99_ms
            r.worst_ttft_s = max(r.worst_ttft_s, m.ttft_p99_s)
            desired = (
                svc.replicas.min
                if fixed_at_min
                else desired_replicas(
                    svc, ev, autoscaling, m.served / 60, ready, st.kv_tokens, m.backlog, len(st.replicas)
                )
            )
            st.history.append(desired)
            window = max(1, math.ceil(cooldown_s / 60))
            current = len(st.replicas)
            if desired > current:
                for _ in range(desired - current):
                    reclaimed = _make_room(
                        res, jobs, load, pool_gpus, svc.gpus_per_replica, t, _serving_used(state, sims)
                    )
                    # GPUs freed by this minute's preemption are free only after the jobs' grace period
                    reclaimed = reclaimed or last_reclaim == t
                    last_reclaim = t if reclaimed else last_reclaim
                    delay = (grace_min if reclaimed else 0) + math.ceil(
                        (st.warm_s if reclaimed or fixed else st.cold_s) / 60
                    )
                    st.replicas.append(_Replica(t + delay))
                    r.scale_up_events.append((t, t + delay, reclaimed))
                    r.scale_ups += 1
                    r.reclaims += reclaimed
            else:
                keep = max(st.history[-window:])  # scale down only after the stabilization window
                if keep < current:
                    st.replicas.sort(key=lambda x: x.ready_at)
                    del st.replicas[keep:]
            r.replicas_max_seen = max(r.replicas_max_seen, len(st.replicas))
            r.replicas_by_minute.append(len(st.replicas))
            r.gpu_minutes += len(st.replicas) * svc.gpus_per_replica
        used = _serving_used(state, sims)
        res.serving_gpu_minutes += used
        # training: fill what its quota and borrowing allow
        if load is not None:
            lendable = min(lending_limit, serving_quota - used)
            borrowable = lendable if borrow_limit is None else min(borrow_limit, lendable)
            cap = min(nominal + borrowable, pool_gpus - used)
            running = sum(j.gpus for j in jobs)
            while running + load.gpus_per_job <= cap:
                jobs.append(_Job(load.gpus_per_job, t, running + load.gpus_per_job > nominal))
                running += load.gpus_per_job
            res.training_gpu_minutes += running
    return res


def _serving_used(state: dict[str, _State], sims: list[_Sim]) -> int:
    return sum(len(state[s.name].replicas) * s.gpus_per_replica for s, _, _ in sims)


def _make_room(
    res: PoolResult, jobs: list[_Job], load: TrainingLoad | None, pool_gpus: int, gpus: int, t: int, serving_used: int
) -> bool:
    """Free ``gpus`` for a serving pod: idle GPUs first; else preempt the newest borrowing training jobs (Kueue
    reclaims within the cohort, newest admitted first). True when training was preempted."""
    free = pool_gpus - serving_used - sum(j.gpus for j in jobs)
    if free >= gpus or load is None:
        return False
    for job in sorted((j for j in jobs if j.borrowed), key=lambda j: -j.start):
        jobs.remove(job)
        res.preempted_jobs += 1
        res.lost_gpu_minutes += job.gpus * ((t - job.start) % load.checkpoint_minutes)
        free += job.gpus
        if free >= gpus:
            break
    return True


def load_training(doc: dict[str, Any]) -> list[TrainingLoad]:
    return [
        TrainingLoad(
            str(t["pool"]),
            int(t["gpusPerJob"]),
            int(t.get("checkpointMinutes", 30)),
            int(t.get("terminationGraceSeconds", 30)),
        )
        for t in doc.get("training") or []
    ]
