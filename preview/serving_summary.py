"""The preview's serving rows: per service what a reviewer checks before deploy, in numbers: the fit (GiB needed vs
the server's budget), the evidence behind the SLO (a measured row, or "no evidence"), capacity at max replicas vs
the peak, and the price: $/h at min and max replicas and $ per million output tokens at peak, next to the pool's
$/GPU-h that training pays. Pure: reads the spec, pool facts and the catalog (``stacks/plan/serving.py``)."""
from __future__ import annotations

from typing import Any, Sequence

from stacks.plan.facts import PoolFacts
from stacks.plan.serving import evidence, fit, model_card, service_cost
from stacks.spec.stack import StackSpec


def serving_rows(spec: StackSpec, facts: Sequence[PoolFacts]) -> list[dict[str, Any]]:
    if spec.serving is None:
        return []
    pools = {f.name: f for f in facts}
    rows = []
    for svc in spec.serving.services:
        pool = pools[svc.pool]
        card = model_card(svc)
        f = fit(svc, card, pool.machine.gpu_memory_gib_per_gpu) if card else None
        ev = evidence(svc, pool.machine.gpu_model)
        cost = service_cost(svc, pool)
        rows.append({
            "service": svc.name, "model": card.model if card else svc.model, "precision": svc.precision.value,
            "pool": svc.pool, "gpu": pool.machine.gpu_model.value,
            "workload": "LeaderWorkerSet" if svc.nodes_per_replica > 1 else "Deployment",
            "gpusPerReplica": svc.gpus_per_replica, "nodesPerReplica": svc.nodes_per_replica,
            "replicasMin": svc.replicas.min, "replicasMax": svc.replicas.max,
            "neededGib": round(f.needed_gib, 1) if f else None, "budgetGib": round(f.budget_gib, 1) if f else None,
            "peakRequestsPerSecond": svc.traffic.peak_requests_per_second,
            "requestsPerSecondPerReplica": round(ev.requests_per_s_per_replica, 2) if ev else None,
            "capacityAtMax": round(ev.requests_per_s_per_replica * svc.replicas.max, 1) if ev else None,
            "evidence": ev.row.cite() if ev else "no evidence",
            "replicasAtPeak": cost.replicas_at_peak,
            "usdPerGpuHour": None if cost.usd_per_gpu_hour is None else round(cost.usd_per_gpu_hour, 4),
            "usdPerHourMin": None if cost.usd_per_hour_min is None else round(cost.usd_per_hour_min, 2),
            "usdPerHourMax": None if cost.usd_per_hour_max is None else round(cost.usd_per_hour_max, 2),
            "usdPerMillionOutputTokens": cost.usd_per_million_output_tokens,
        })
    return rows
