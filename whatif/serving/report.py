"""What the serving what-if prints: per service SLO attainment (share of minutes whose modelled p99 met each target),
GPU-hours, scale-ups and reclaims, $ per million output tokens; per pool utilization, training's share, training
work lost to reclaim; and the answer to "does serving hold its SLO while the cluster runs at ≥ 80 % utilization?"."""

from __future__ import annotations

from typing import Any

from stacks.plan.serving import LOW_CONFIDENCE_MARGIN
from stacks.spec.stack import StackSpec
from whatif.serving.sim import ServiceResult, SimResult

HOLDS_ATTAINMENT = 0.99
"""Serving "holds" its SLO when at least this share of minutes meets both p99 targets."""
BUSY_UTILIZATION = 0.80


def verdict(result: SimResult) -> tuple[bool | None, str]:
    if not result.services:
        return None, "no service could be simulated: no measured throughput for its model, GPU and SLO (no evidence)"
    holds = all(min(s.ttft_attainment, s.tpot_attainment) >= HOLDS_ATTAINMENT for s in result.services)
    gpus = sum(p.gpus for p in result.pools)
    util = sum(p.utilization * p.gpus for p in result.pools) / gpus if gpus else 0.0
    busy = util >= BUSY_UTILIZATION
    worst = min(min(s.ttft_attainment, s.tpot_attainment) for s in result.services)
    answer = "yes" if holds and busy else "no"
    why = (
        f"{answer}: the worst service met both p99 targets in {worst:.1%} of minutes (holds at ≥ "
        f"{HOLDS_ATTAINMENT:.0%}) while GPU utilization was {util:.1%} (busy at ≥ {BUSY_UTILIZATION:.0%})"
    )
    if result.no_evidence:
        why += f"; not simulated (no evidence): {', '.join(result.no_evidence)}"
    if result.fixed_at_min:
        why += f"; replicas fixed at min, the autoscaler may read nothing ({result.fixed_at_min})"
    for s in low_confidence(result):
        why += (
            f"; LOW CONFIDENCE: {s.name}'s SLO is only {s.slo_margin:.1%} above its row's measured p99 (held on "
            "the row's request shape, not the service's): load-test it"
        )
    return holds and busy, why


def low_confidence(result: SimResult) -> list[ServiceResult]:
    """Services whose capacity rests on a row measured within ``LOW_CONFIDENCE_MARGIN`` of their SLO."""
    return [s for s in result.services if s.slo_margin is not None and s.slo_margin < LOW_CONFIDENCE_MARGIN]


def as_dict(spec: StackSpec, result: SimResult) -> dict[str, Any]:
    svcs = {s.name: s for s in spec.serving.services} if spec.serving else {}
    ok, why = verdict(result)
    return {
        "hours": result.hours,
        "answer": {"holdsSloAtHighUtilization": ok, "lowConfidence": bool(low_confidence(result)), "why": why},
        "services": [
            {
                "service": s.name,
                "evidence": s.evidence,
                "ttftAttainment": round(s.ttft_attainment, 4),
                "tpotAttainment": round(s.tpot_attainment, 4),
                "worstTtftP99S": round(s.worst_ttft_s, 2),
                "gpuHours": round(s.gpu_minutes / 60, 2),
                "maxReplicas": s.replicas_max_seen,
                "scaleUps": s.scale_ups,
                "reclaims": s.reclaims,
                "replicaStartOnReclaimedGpusS": round(s.replica_start_s, 1),
                "requests": round(s.requests),
                "served": round(s.served),
                # the preview's usdPerMillionOutputTokens is at peak: name the basis so the two are not confused
                "usdPerMillionOutputTokensBasis": "average over the simulated hours",
                "usdPerMillionOutputTokens": None
                if (v := s.usd_per_million_output_tokens(svcs[s.name].traffic.output_tokens)) is None
                else round(v, 4),
            }
            for s in result.services
        ],
        "pools": [
            {
                "pool": p.pool,
                "gpus": p.gpus,
                "utilization": round(p.utilization, 4),
                "trainingUtilization": round(p.training_utilization, 4),
                "servingGpuHours": round(p.serving_gpu_minutes / 60, 2),
                "trainingGpuHours": round(p.training_gpu_minutes / 60, 2),
                "trainingLostGpuHours": round(p.lost_gpu_minutes / 60, 2),
                "preemptedJobs": p.preempted_jobs,
            }
            for p in result.pools
        ],
        "notSimulated": result.no_evidence,
        **({"replicasFixedAtMin": result.fixed_at_min} if result.fixed_at_min else {}),
    }


def text(stack: str, spec: StackSpec, result: SimResult) -> str:
    d = as_dict(spec, result)
    lines = [f"What-if serving: stack {stack}, {result.hours} h (minute steps; model: whatif/serving/queue.py)", ""]
    for s in d["services"]:
        usd = "unknown" if s["usdPerMillionOutputTokens"] is None else f"${s['usdPerMillionOutputTokens']:.3f}"
        lines += [
            f"service {s['service']}: p99 TTFT met {s['ttftAttainment']:.1%} of minutes, p99 TPOT met "
            f"{s['tpotAttainment']:.1%} (worst modelled p99 TTFT {s['worstTtftP99S']:.1f} s)",
            f"  {s['gpuHours']:.1f} GPU-h, up to {s['maxReplicas']} replicas, {s['scaleUps']} scale-ups "
            f"({s['reclaims']} on GPUs reclaimed from training, each serving after "
            f"{s['replicaStartOnReclaimedGpusS']:.0f} s), {usd} per million output tokens (average over "
            f"the simulated hours; the preview's is at peak)",
            f"  capacity from: {s['evidence']}",
        ]
    for p in d["pools"]:
        lines.append(
            f"pool {p['pool']} ({p['gpus']} GPUs): utilization {p['utilization']:.1%} (training "
            f"{p['trainingUtilization']:.1%}); serving {p['servingGpuHours']:.1f} GPU-h, training "
            f"{p['trainingGpuHours']:.1f} GPU-h, {p['preemptedJobs']} training jobs preempted by reclaim, "
            f"{p['trainingLostGpuHours']:.2f} GPU-h of training work lost"
        )
    for name in d["notSimulated"]:
        lines.append(f"service {name}: not simulated: no evidence (no measured run of its model, GPU and SLO)")
    lines += ["", f"Does serving hold its SLO while the cluster runs at ≥ 80 % utilization? {d['answer']['why']}"]
    return "\n".join(lines)
