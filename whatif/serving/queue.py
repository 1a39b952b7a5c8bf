"""The per-replica latency model of the serving what-if: a batched server as a fluid queue, minute by minute.

A replica is one continuous-batching server whose throughput at the SLO is a measured row (MLPerf Inference v5.1
Server: requests arrive as a Poisson process at the target rate and the run is valid only if p99 TTFT and TPOT stay
within the limits, so the row's p99 latencies already include the queueing of Poisson arrivals at that rate). Below
that rate the model keeps the row's p99 latencies (an upper bound: a less loaded server is not slower). Above it, the
excess queues: the backlog grows by (arrivals - capacity) x time and the p99 time to first token grows by the wait
of the last request in the backlog, backlog / capacity (Little's law, L = λW, on the fluid limit of the queue;
shared facts inference-research.md §2.6). Decode speed (TPOT) stays at the row's p99: continuous batching admits
no more sequences than fit, so a longer queue waits before prefill instead of slowing decodes.

Limits, said plainly: no variance within a minute beyond what the row's p99 already holds; one request shape (the
service's mean input and output tokens, converted through output tokens/s); no KV-cache preemption or prefix-cache
effects; a row measured with another engine is taken as the service's (validation flags it). The queueing model is
a first cut of the kind the research (arXiv 2407.05347, 2605.04595) validates against simulation for batched
servers, not a reproduction of either."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Minute:
    backlog: float
    """Requests waiting at the end of the minute."""
    served: float
    """Requests that started service in the minute."""
    ttft_p99_s: float
    tpot_p99_s: float


def step(
    backlog: float, arrivals_per_s: float, capacity_per_s: float, ttft_s: float, tpot_s: float, seconds: float = 60.0
) -> Minute:
    """One step of the fluid queue. ``capacity_per_s``: ready replicas × requests/s each at the SLO."""
    offered = backlog + arrivals_per_s * seconds
    served = min(offered, capacity_per_s * seconds)
    left = offered - served
    wait = left / capacity_per_s if capacity_per_s > 0 else float("inf") if left > 0 else 0.0
    return Minute(left, served, ttft_s + wait, tpot_s)
