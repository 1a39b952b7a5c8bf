"""Serving arithmetic shared by validation, the preview's cost table, the renderer and the what-if: does a replica fit
(weights + KV cache ≤ GPU memory × GPUs × the server's share), what one replica carries at the SLO (from a measured
throughput row, never guessed), how long a new replica takes to start, and the Kueue queue that holds serving's GPUs in
the training cohort (what a service costs: ``serving_cost``). Pure: no Pulumi, no rendering."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from catalog import CapacityType, Cloud, GpuModel
from catalog.provisioning import load_provisioning
from catalog.serving import VLLM_IMAGE, ModelCard, ThroughputRow, load_models, load_throughput
from stacks.plan.facts import PoolFacts
from stacks.plan.pod_start import pod_start_plan
from stacks.plan.serving_load import startup_probe_budget_s, weights_load_s
from stacks.plan.start_time import factors, overhead_s, pool_start
from stacks.spec.scheduling import PoolQuota, PriorityClass, Queue, SchedulingSpec
from stacks.spec.serving import Precision, Service, ServingSpec
from stacks.spec.stack import NodePool

GIB = 1024**3
SERVING_QUEUE = "serving"
"""The Kueue ClusterQueue (and LocalQueue) every service's pods are admitted through."""
SERVING_PRIORITY_CLASS = "gpu-cluster-serving"
"""The Kubernetes PriorityClass and Kueue WorkloadPriorityClass of serving pods."""
PORT = 8000
"""vLLM's OpenAI-compatible server port (`vllm serve` default)."""


def model_card(svc: Service) -> ModelCard | None:
    """The catalog's card, or one made of the user's numbers (``customModel``); None for an unknown name."""
    if svc.custom_model is not None:
        c = svc.custom_model
        return ModelCard(
            f"custom ({svc.name})",
            round(c.parameters_billions * 1e9),
            c.layers,
            c.kv_heads,
            c.head_dim,
            "user-declared",
            "customModel in the stack file",
        )
    return load_models().get(svc.model or "")


def kv_precision(svc: Service) -> Precision:
    if svc.kv_cache_precision is not None:
        return svc.kv_cache_precision
    return Precision.FP8 if svc.precision in (Precision.FP8, Precision.FP4) else Precision.BF16


def concurrency(svc: Service, gpu: GpuModel | None = None) -> int:
    """Requests a replica holds at once (vLLM's ``--max-num-seqs``, and the KV cache the fit check sizes): declared;
    else what a replica holds at its measured rate (``measured_concurrency``), so that load above it waits in
    vLLM's queue (``vllm:num_requests_waiting``, which the waiting trigger and the what-if read) instead of growing
    the batch and every request's TPOT; without evidence (or no GPU given), Little's law at peak with each request
    taking its SLO latency (L = λW, W = TTFT + output tokens × TPOT)."""
    if svc.max_concurrency is not None:
        return svc.max_concurrency
    ev = evidence(svc, gpu) if gpu is not None else None
    if ev is not None:
        return measured_concurrency(svc, ev)
    per_replica = svc.traffic.peak_requests_per_second / svc.replicas.max
    latency_s = (svc.slo.ttft_p99_ms + svc.traffic.output_tokens * svc.slo.tpot_p99_ms) / 1000
    return max(1, math.ceil(per_replica * latency_s))


@dataclass(frozen=True)
class Fit:
    gpu_gib: float
    """Memory of one GPU."""
    budget_gib: float
    """GPU memory × GPUs per replica × the server's memory share."""
    weights_gib: float
    kv_gib: float
    """KV cache needed: the larger of one full context and the concurrency at the mean request length."""
    kv_tokens: int
    kv_kib_per_token: float

    @property
    def needed_gib(self) -> float:
        return self.weights_gib + self.kv_gib

    @property
    def missing_gib(self) -> float:
        return max(0.0, self.needed_gib - self.budget_gib)

    @property
    def fits(self) -> bool:
        return self.missing_gib == 0.0


def fit(svc: Service, card: ModelCard, gpu_memory_gib: float, gpu: GpuModel | None = None) -> Fit:
    """``gpu``: the pool's GPU model, which picks the evidence row the rendered concurrency comes from."""
    kv_bytes = card.kv_bytes_per_token(kv_precision(svc).value)
    tokens = max(svc.max_context_tokens, concurrency(svc, gpu) * (svc.traffic.input_tokens + svc.traffic.output_tokens))
    return Fit(
        gpu_memory_gib,
        gpu_memory_gib * svc.gpus_per_replica * svc.gpu_memory_utilization,
        card.weights_bytes(svc.precision.value) / GIB,
        tokens * kv_bytes / GIB,
        tokens,
        kv_bytes / 1024,
    )


@dataclass(frozen=True)
class Evidence:
    row: ThroughputRow
    requests_per_s_per_replica: float
    """Output tokens/s per GPU × GPUs per replica ÷ the service's output tokens per request."""
    same_server: bool
    """The row was measured with the service's server (vLLM); else it is another engine's number."""


def evidence(svc: Service, gpu: GpuModel, rows: tuple[ThroughputRow, ...] | None = None) -> Evidence | None:
    """The best measured run of this model, GPU and precision whose measured p99 TTFT and TPOT are both within the
    service's SLO (a run at a looser latency says nothing about this SLO). Runs with the service's own server win
    over other engines'. None: no source measured it, and nothing is guessed."""
    if svc.custom_model is not None or svc.model is None:
        return None
    rows = load_throughput() if rows is None else rows
    ok = [
        r
        for r in rows
        if r.model == svc.model
        and r.gpu_model == gpu
        and r.precision == svc.precision.value
        and r.p99_ttft_ms <= svc.slo.ttft_p99_ms
        and r.p99_tpot_ms <= svc.slo.tpot_p99_ms
    ]
    if not ok:
        return None
    best = max(ok, key=lambda r: (r.software == svc.server.value, r.output_tokens_per_s_per_gpu))
    rps = best.output_tokens_per_s_per_gpu * svc.gpus_per_replica / svc.traffic.output_tokens
    return Evidence(best, rps, best.software == svc.server.value)


SERVED_HEADROOM = 0.8
"""Scale out when the requests a replica completes per second reach this share of its measured rate."""
LOW_CONFIDENCE_MARGIN = 0.10
"""An SLO within 10 % of the row's measured p99 rests on the row's request shape (MLPerf's prompt and output length
distributions, not the service's): flagged as low confidence."""


def time_in_server_s(svc: Service, ev: Evidence) -> float:
    """Mean time a request spends in a replica at the measured rate, for Little's law (L = λW, which needs the mean).
    The rows publish p99 only, so this is an estimate, stated: decode, output tokens × the row's p99 TPOT (decode
    steps are shared by the whole batch, so per-request TPOT varies little and its p99 is near its mean), and no
    TTFT (its p99 at the measured rate is a queueing tail, far above its mean). Used for what a replica holds at the
    measured rate (``measured_concurrency``) and the KV-cache estimate, never as a scaling target: the time a request
    spends in the server grows with the load, so a target on requests in flight would move with it."""
    return svc.traffic.output_tokens * ev.row.p99_tpot_ms / 1000


def measured_concurrency(svc: Service, ev: Evidence) -> int:
    """Requests a replica holds at its measured rate (Little's law: req/s per replica × ``time_in_server_s``)."""
    return max(1, math.ceil(ev.requests_per_s_per_replica * time_in_server_s(svc, ev)))


def served_target(svc: Service, ev: Evidence) -> float:
    """Completed requests per second per replica the autoscaler aims at: 0.8 × (the row's output tokens/s per GPU ×
    GPUs per replica ÷ the service's output tokens per request), e.g. 0.8 × 5,104 ÷ 200 = 0.8 × 25.52 = 20.42 for
    one H100, rounded to what the rendered trigger's threshold says (the what-if reads this same number). Not the
    row's own ``requests_per_s_per_gpu``: that is at MLPerf's output length, not the service's. A completion rate
    has no time-in-server in it, so its per-replica value at a given load does not depend on how long requests
    take."""
    return round(SERVED_HEADROOM * ev.requests_per_s_per_replica, 2)


def kv_tokens_per_replica(svc: Service, card: ModelCard, gpu_memory_gib: float) -> float:
    """KV-cache tokens one replica holds: the server's memory budget minus the weights."""
    f = fit(svc, card, gpu_memory_gib)
    return max(1.0, (f.budget_gib - f.weights_gib) * 1024 * 1024 / f.kv_kib_per_token)


def slo_margin(svc: Service, ev: Evidence) -> float:
    """How far the SLO is above the row's measured p99s (the tighter of TTFT and TPOT): 0.05 = 5 %."""
    return min(svc.slo.ttft_p99_ms / ev.row.p99_ttft_ms, svc.slo.tpot_p99_ms / ev.row.p99_tpot_ms) - 1


def replicas_at(svc: Service, ev: Evidence | None, requests_per_s: float) -> int:
    """Replicas the load needs (within min … max); max when there is no evidence of what one carries."""
    if ev is None:
        return svc.replicas.max
    return min(svc.replicas.max, max(svc.replicas.min, math.ceil(requests_per_s / ev.requests_per_s_per_replica)))


@dataclass(frozen=True)
class ReplicaStart:
    """What a new replica waits for, in seconds: a node (when none is running), the image, the pod start, the weights
    and the server start. Read by validation (against the traffic's ramp) and the what-if (replica start)."""

    node_s: float
    pull_s: float
    pull_how: str
    pod_s: float
    load_s: float

    @property
    def total_s(self) -> float:
        return self.node_s + self.pull_s + self.pod_s + self.load_s


def replica_start(cloud: Cloud, pool: NodePool, svc: Service, card: ModelCard, node_running: bool) -> ReplicaStart:
    """``node_running``: the replica lands on a node that already runs (a fixed-size pool, or GPUs reclaimed from
    training): no provisioning; its image is pulled unless the pool pre-pulls it."""
    f = factors()
    prov = load_provisioning().get((cloud, pool.capacity.type))
    plan = pod_start_plan(cloud, pool)
    start = pool_start(
        plan,
        0.0 if node_running or prov is None else prov.provision_seconds,
        pool.pod_start.image_size_gb if pool.pod_start else None,
        f,
    )
    pull_s, how = (0.0, "pre-pulled") if node_running and plan.prepull else (start.pull_s, start.pull_how)
    return ReplicaStart(start.provision_s, pull_s, how, overhead_s(svc.nodes_per_replica, f), weights_load_s(card, svc))


GMP_QUERY_URL = "https://monitoring.googleapis.com/v1/projects/{project}/location/global/prometheus"
"""Managed Service for Prometheus' PromQL API, which the rendered PodMonitoring fills and KEDA queries on GKE."""
AMP_QUERY_URL = "https://aps-workspaces.{region}.amazonaws.com/workspaces/"
"""An Amazon Managed Service for Prometheus workspace's query URL prefix: the rendered managed collector fills it."""


def unrendered_metrics_source(
    cloud: Cloud, serving: ServingSpec, project: str | None, region: str, account: str | None
) -> str | None:
    """Why KEDA's metric source is not one gpu-cluster fills with vLLM's metrics and grants KEDA to read, or None
    when it is (GKE: Managed Service for Prometheus with a PodMonitoring and Monitoring Viewer by Workload Identity;
    EKS: an AMP workspace of the stack's region and account, filled by the AWS managed collector, queried with Pod
    Identity). With any other source the autoscaler may read nothing, and replicas stay at min."""
    url = serving.autoscaling.prometheus_url
    if cloud == Cloud.GCP:
        if url is None or url == GMP_QUERY_URL.format(project=project):
            return None
        return f"{url} is not this project's Managed Service for Prometheus, which the PodMonitoring fills"
    head = AMP_QUERY_URL.format(region=region)
    if url is None:
        return "no metric source (autoscaling.prometheusUrl)"
    if not url.startswith(head):
        return f"{url} is not an Amazon Managed Service for Prometheus workspace in {region}"
    if not account:
        return "accountId is not set, so the workspace's ARN (the collector's destination, KEDA's grant) is unknown"
    return None


def image(svc: Service) -> str:
    return svc.image or VLLM_IMAGE


@dataclass(frozen=True)
class BucketPath:
    """Where a service's weights are: ``gs://`` (GKE) or ``s3://`` (EKS), a bucket and the prefix under it."""

    scheme: str
    bucket: str
    prefix: str
    """Without leading or trailing ``/``; empty for the bucket's root."""


def bucket_path(uri: str) -> BucketPath | None:
    """``gs://b/p/q`` -> (gs, b, p/q); None for a Hugging Face repo ID (downloaded, no bucket identity needed)."""
    for scheme in ("gs", "s3"):
        if uri.startswith(f"{scheme}://"):
            bucket, _, prefix = uri[len(scheme) + 3 :].partition("/")
            return BucketPath(scheme, bucket, prefix.strip("/"))
    return None


def serving_gpus(serving: ServingSpec) -> dict[str, tuple[int, int]]:
    """Pool -> (GPUs at min replicas, GPUs at max replicas) over every service."""
    out: dict[str, tuple[int, int]] = {}
    for svc in serving.services:
        lo, hi = out.get(svc.pool, (0, 0))
        out[svc.pool] = (lo + svc.replicas.min * svc.gpus_per_replica, hi + svc.replicas.max * svc.gpus_per_replica)
    return out


def ready_budget_s(cloud: Cloud, pool: NodePool, svc: Service) -> float:
    """The longest a serving pod may take from Kueue's admission to Ready without being killed by its own startup
    probe: a node (unless the pool is fixed), the image, the pod start, then the probe's whole budget."""
    card = model_card(svc)
    if card is None:
        return startup_probe_budget_s(None, svc)
    rs = replica_start(cloud, pool, svc, card, node_running=pool.min_nodes == pool.max_nodes)
    return rs.node_s + rs.pull_s + rs.pod_s + startup_probe_budget_s(card, svc)


def ready_timeout_s(cloud: Cloud, pool: NodePool, svc: Service) -> int:
    """The service's ready budget in whole minutes: Pulumi's create/update wait for its Deployment/LeaderWorkerSet
    (whose own default, 10 minutes, is shorter than a cold node + image + weights load)."""
    return 60 * math.ceil(ready_budget_s(cloud, pool, svc) / 60)


def serving_pods_ready_timeout(cloud: Cloud, pools: Sequence[NodePool], serving: ServingSpec) -> int:
    """Kueue's ``waitForPodsReady.timeout`` serving needs, whole minutes: its slowest pod's ready budget."""
    by_name = {p.name: p for p in pools}
    return max((ready_timeout_s(cloud, by_name[s.pool], s) for s in serving.services if s.pool in by_name), default=0)


def with_serving_queue(
    sched: SchedulingSpec, serving: ServingSpec, cloud: Cloud | None = None, pools: Sequence[NodePool] = ()
) -> SchedulingSpec:
    """The scheduling section plus serving's ClusterQueue and priority: nominal quota = GPUs at max replicas, never
    borrowing (so no reclaim can ever preempt serving), lending all but the GPUs of ``replicas.min`` to the cohort
    (training borrows them while serving is idle; ``reclaimWithinCohort`` takes them back when serving scales up).
    Without a cohort there is no one to lend to: plain quota.

    Kueue has one ``waitForPodsReady`` for every workload, serving's pods included: a serving pod still loading its
    weights when the gang timeout strikes is evicted and requeued, over and over. So the timeout (and the recovery
    timeout, which defaults to it) is raised to serving's ready budget (``serving_pods_ready_timeout``) when shorter;
    training gangs then get as long. ``cloud`` and ``pools``: the stack's (without them the timeout is left)."""
    quotas = []
    for pool, (lo, hi) in serving_gpus(serving).items():
        if sched.cohort is None:
            quotas.append(PoolQuota(pool=pool, gpus=hi))
        else:
            quotas.append(PoolQuota(pool=pool, gpus=hi, borrowing_limit=0, lending_limit=hi - lo))
    queue = Queue(name=SERVING_QUEUE, namespace=serving.namespace, quotas=quotas)
    pc = PriorityClass(
        name=SERVING_PRIORITY_CLASS,
        value=serving.priority,
        description="Inference serving: above every training class, never preempted by training.",
    )
    update: dict[str, Any] = {"queues": [*sched.queues, queue], "priority_classes": [*sched.priority_classes, pc]}
    if cloud is not None and sched.gang.enabled:
        need = serving_pods_ready_timeout(cloud, pools, serving)
        if need > sched.gang.timeout_seconds:
            update["gang"] = sched.gang.model_copy(update={"timeout_seconds": need})
    return sched.model_copy(update=update)


def spot_only(pool: PoolFacts) -> bool:
    return pool.capacity == CapacityType.SPOT
