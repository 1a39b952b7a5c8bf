"""The rendered autoscaler's arithmetic, shared by the what-if (every simulated minute) and the preview's price at
peak (``peak_replicas``): what KEDA's triggers ask, as the HPA computes them, and the replicas it settles on as
traffic climbs the service's daily profile. One model, so the price and the simulation cannot disagree. Pure."""

from __future__ import annotations

import math

from stacks.plan.serving import Evidence, served_target, time_in_server_s
from stacks.spec.serving import Autoscaling, Service

HPA_TOLERANCE = 0.1
"""The HPA leaves the replica count alone while a metric is within 10 % of its target (kube-controller-manager
``--horizontal-pod-autoscaler-tolerance``, default 0.1; KEDA's HPA inherits it)."""


def _hpa(current: int, ratio: float) -> int:
    """One AverageValue metric's proposal, as the HPA computes it: keep ``current`` within the tolerance, else
    ratio × current."""
    if current > 0 and abs(ratio - 1) <= HPA_TOLERANCE:
        return current
    return math.ceil(ratio * max(current, 1))


def desired_replicas(
    svc: Service,
    ev: Evidence,
    a: Autoscaling,
    served_per_s: float,
    ready: int,
    kv_tokens: float,
    backlog: float = 0.0,
    current: int | None = None,
) -> int:
    """What the rendered ScaledObject's triggers ask, as the HPA computes them (the largest wins, within min … max,
    each metric within the HPA's 10 % tolerance of its target leaving ``current`` replicas, default ``ready``):
    total waiting / target (AverageValue, over all pods), KV usage / target × ready pods (Value: the HPA tests the
    tolerance on usage / target itself, then scales the ready pods) and completed requests per second /
    ``served_target`` (AverageValue). KV usage = the tokens in flight (served/s × ``time_in_server_s``, prompt and
    half the output on average) ÷ the KV-cache tokens of the ready replicas."""
    now = ready if current is None else current
    per = max(now, 1)
    by_wait = _hpa(now, backlog / a.waiting_requests_per_replica / per) if backlog > 0 else 0
    tokens = served_per_s * time_in_server_s(svc, ev) * (svc.traffic.input_tokens + svc.traffic.output_tokens / 2)
    kv_ratio = min(1.0, tokens / (max(ready, 1) * kv_tokens)) / a.kv_cache_usage
    by_kv = now if abs(kv_ratio - 1) <= HPA_TOLERANCE else math.ceil(kv_ratio * max(ready, 1))
    by_served = _hpa(now, served_per_s / served_target(svc, ev) / per)
    return max(svc.replicas.min, min(svc.replicas.max, max(by_wait, by_kv, by_served)))


def _settle(svc: Service, ev: Evidence, a: Autoscaling, requests_per_s: float, start: int, kv_tokens: float) -> int:
    """The count the autoscaler stops at from ``start`` replicas under a steady load they carry (no queue): each
    step asks ``desired_replicas`` on the replicas the last one left, until it asks for no change."""
    n = start
    for _ in range(64):  # converges in a step or two: from outside the tolerance it jumps to ceil(load / target)
        served = min(requests_per_s, n * ev.requests_per_s_per_replica)
        nxt = desired_replicas(svc, ev, a, served, n, kv_tokens, 0.0, n)
        if nxt == n:
            break
        n = nxt
    return n


def replicas_by_hour(svc: Service, ev: Evidence, a: Autoscaling, kv_tokens: float) -> list[int]:
    """Replicas the autoscaler runs in each hour of the service's daily profile (one hour at peak without one),
    climbing from ``replicas.min`` at midnight, as the what-if's day starts. Within the HPA's tolerance more than one
    count is stable at a load (chat at 150 req/s: 7 or 8), so the path decides: the hour's load on the last hour's
    replicas. A load those replicas cannot carry fills vLLM's queue faster than a replica starts, so the waiting
    trigger asks for ``replicas.max`` before the completion rate brings it back down."""
    n = svc.replicas.min
    out = []
    for share in svc.traffic.daily_profile or [1.0]:
        load = svc.traffic.peak_requests_per_second * share
        if load > n * ev.requests_per_s_per_replica:
            n = svc.replicas.max
        n = _settle(svc, ev, a, load, n, kv_tokens)
        out.append(n)
    return out


def peak_hours(svc: Service) -> list[int]:
    """The hours of the daily profile at its highest share (every hour of a flat day)."""
    profile = svc.traffic.daily_profile or [1.0]
    return [h for h, share in enumerate(profile) if share == max(profile)]


def peak_replicas(svc: Service, ev: Evidence, a: Autoscaling, kv_tokens: float) -> int:
    """Replicas the rendered autoscaler runs during the peak hours of the service's day (``replicas_by_hour``): the
    price at peak is at this count."""
    by_hour = replicas_by_hour(svc, ev, a, kv_tokens)
    return max(by_hour[h] for h in peak_hours(svc))
