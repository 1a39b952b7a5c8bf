"""What each inference service costs (billed as the preview's cost table bills its pool) and the preview's serving
table: per service the fit, the evidence behind the SLO, capacity at max replicas and the price. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from stacks.plan.facts import PoolFacts
from stacks.plan.serving import (
    LOW_CONFIDENCE_MARGIN,
    evidence,
    fit,
    kv_tokens_per_replica,
    model_card,
    ready_timeout_s,
    replicas_at,
    slo_margin,
)
from stacks.plan.reservation import reserved_nodes
from stacks.plan.serving_autoscale import peak_replicas
from stacks.spec.serving import Autoscaling, Service
from stacks.spec.stack import NodePool, StackSpec


@dataclass(frozen=True)
class ServiceCost:
    service: str
    pool: str
    usd_per_gpu_hour: float | None
    usd_per_hour_min: float | None
    usd_per_hour_max: float | None
    replicas_at_peak: int
    usd_per_million_output_tokens: float | None
    """At peak, with the replicas the peak needs; None without evidence or a price."""
    evidence: str


def service_cost(
    svc: Service, pool: PoolFacts, node_pool: NodePool, a: Autoscaling, overrides: Sequence[dict] = ()
) -> ServiceCost:
    """Priced as the preview's cost table bills the pool (``pool_billing``: a block's fee, an override, else the list
    price), at the replicas the rendered autoscaler runs at peak (``peak_replicas``)."""
    from stacks.plan.billing import pool_billing

    rate = pool_billing(pool, node_pool, overrides).usd_per_node_hour
    per_gpu = rate / pool.machine.gpus if rate is not None and pool.machine.gpus else None
    ev = evidence(svc, pool.machine.gpu_model)
    card = model_card(svc)
    at_peak = (
        replicas_at(svc, ev, svc.traffic.peak_requests_per_second)
        if ev is None or card is None
        else peak_replicas(svc, ev, a, kv_tokens_per_replica(svc, card, pool.machine.gpu_memory_gib_per_gpu))
    )
    per_m = None
    if per_gpu is not None and ev is not None:
        tokens_per_h = svc.traffic.peak_requests_per_second * svc.traffic.output_tokens * 3600
        per_m = at_peak * svc.gpus_per_replica * per_gpu / tokens_per_h * 1e6
    gpus = svc.gpus_per_replica
    return ServiceCost(
        svc.name,
        svc.pool,
        per_gpu,
        None if per_gpu is None else svc.replicas.min * gpus * per_gpu,
        None if per_gpu is None else svc.replicas.max * gpus * per_gpu,
        at_peak,
        None if per_m is None else round(per_m, 4),
        ev.row.cite() if ev else "no evidence",
    )


def serving_rows(spec: StackSpec, facts: Sequence[PoolFacts], overrides: Sequence[dict] = ()) -> list[dict[str, Any]]:
    """Per service what a reviewer checks before deploy, in numbers (the preview's serving table): the fit (GiB
    needed vs the server's budget), the evidence behind the SLO, capacity at max replicas vs the peak, and the price:
    $/h at min and max replicas, $ per million output tokens at peak, next to the pool's $/GPU-h training pays."""
    if spec.serving is None:
        return []
    pools = {f.name: f for f in facts}
    node_pools = {p.name: p for p in spec.node_pools}
    rows = []
    for svc in spec.serving.services:
        pool = pools[svc.pool]
        card = model_card(svc)
        f = fit(svc, card, pool.machine.gpu_memory_gib_per_gpu, pool.machine.gpu_model) if card else None
        ev = evidence(svc, pool.machine.gpu_model)
        cost = service_cost(svc, pool, node_pools[svc.pool], spec.serving.autoscaling, overrides)
        margin = slo_margin(svc, ev) if ev else None
        rows.append(
            {
                "service": svc.name,
                "model": card.model if card else svc.model,
                "precision": svc.precision.value,
                "pool": svc.pool,
                "gpu": pool.machine.gpu_model.value,
                "workload": "LeaderWorkerSet" if svc.nodes_per_replica > 1 else "Deployment",
                "gpusPerReplica": svc.gpus_per_replica,
                "nodesPerReplica": svc.nodes_per_replica,
                "replicasMin": svc.replicas.min,
                "replicasMax": svc.replicas.max,
                "readyTimeoutS": ready_timeout_s(spec.cloud, node_pools[svc.pool], svc),
                "neededGib": round(f.needed_gib, 1) if f else None,
                "budgetGib": round(f.budget_gib, 1) if f else None,
                "peakRequestsPerSecond": svc.traffic.peak_requests_per_second,
                "requestsPerSecondPerReplica": round(ev.requests_per_s_per_replica, 2) if ev else None,
                "capacityAtMax": round(ev.requests_per_s_per_replica * svc.replicas.max, 1) if ev else None,
                "evidence": ev.row.cite() if ev else "no evidence",
                "sloMargin": None if margin is None else round(margin, 4),
                "lowConfidence": margin is not None and margin < LOW_CONFIDENCE_MARGIN,
                "replicasAtPeak": cost.replicas_at_peak,
                "usdPerGpuHour": None if cost.usd_per_gpu_hour is None else round(cost.usd_per_gpu_hour, 4),
                "usdPerHourMin": None if cost.usd_per_hour_min is None else round(cost.usd_per_hour_min, 2),
                "usdPerHourMax": None if cost.usd_per_hour_max is None else round(cost.usd_per_hour_max, 2),
                "usdPerMillionOutputTokens": cost.usd_per_million_output_tokens,
                # a reservation (or capacity block) bills every node: serving's $/h is its share, not a saving
                "poolBilledWhole": reserved_nodes(node_pools[svc.pool]) is not None,
            }
        )
    return rows
