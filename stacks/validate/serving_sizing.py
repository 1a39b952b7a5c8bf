"""Serving's before-deploy numbers for one service: the model fits GPU memory, the SLO holds at peak from a measured
throughput row, a new replica starts before the traffic ramp is over, and what streaming weights in every rank costs.
Reports through ``Issues``; never raises."""

from __future__ import annotations

import math

from catalog import Cloud, GpuModel
from catalog.serving import RUNAI_STREAMER_LOAD, ModelCard
from stacks.plan.serving import concurrency, evidence, fit, replica_start
from stacks.plan.serving_load import (
    bytes_per_node_gb,
    ranks_per_node,
    startup_probe_budget_s,
    streams_every_rank,
    weights_load_s,
)
from stacks.plan.serving_metrics import scale_up_seen_s
from stacks.validate.issues import Issues
from stacks.spec.serving import Service
from stacks.spec.stack import NodePool


def check_fit(
    at: Issues, svc: Service, card: ModelCard, gpu_gib: float, machine: str, gpu: GpuModel | None = None
) -> None:
    f = fit(svc, card, gpu_gib, gpu)
    if f.fits:
        return
    need_gpus = math.ceil(f.needed_gib / (gpu_gib * svc.gpu_memory_utilization))
    at.error(
        "gpusPerReplica",
        f"{card.model} in {svc.precision.value} does not fit: weights {f.weights_gib:.1f} GiB + KV cache "
        f"{f.kv_gib:.1f} GiB ({f.kv_tokens:,} tokens × {f.kv_kib_per_token:g} KiB: "
        f"{concurrency(svc, gpu)} concurrent requests × {svc.traffic.input_tokens + svc.traffic.output_tokens} tokens, "
        f"or one {svc.max_context_tokens:,}-token context) = {f.needed_gib:.1f} GiB, and {svc.gpus_per_replica} × "
        f"{gpu_gib:g} GiB ({machine}) × {svc.gpu_memory_utilization:g} (server memory share) = "
        f"{f.budget_gib:.1f} GiB: {f.missing_gib:.1f} GiB missing",
        svc.gpus_per_replica,
        allowed=f"at least {need_gpus} GPUs of this type per replica",
        fix=f"set gpusPerReplica: {need_gpus} (tensor parallel), use fp8 weights, lower maxConcurrency or "
        "maxContextTokens, or a GPU with more memory",
    )


def check_slo(at: Issues, svc: Service, gpu: GpuModel) -> None:
    ev = evidence(svc, gpu)
    if ev is None:
        what = svc.model or "a custom model"
        at.warn(
            "slo",
            f"no evidence: no measured run of {what} on {gpu.value} in {svc.precision.value} held p99 TTFT "
            f"≤ {svc.slo.ttft_p99_ms:g} ms and TPOT ≤ {svc.slo.tpot_p99_ms:g} ms "
            "(catalog/data/serving-throughput.csv); whether the SLO holds at "
            f"{svc.traffic.peak_requests_per_second:g} req/s is unknown, not assumed",
            {"ttftP99Ms": svc.slo.ttft_p99_ms, "tpotP99Ms": svc.slo.tpot_p99_ms},
            allowed="a model/GPU/precision/SLO a source measured",
            fix="load-test one replica at the SLO and size replicas.max from it, or add the measured row "
            "(with its source) to catalog/data/serving-throughput.csv",
        )
        return
    capacity = svc.replicas.max * ev.requests_per_s_per_replica
    peak = svc.traffic.peak_requests_per_second
    if capacity < peak:
        need = math.ceil(peak / ev.requests_per_s_per_replica)
        at.error(
            ("replicas", "max"),
            f"the SLO does not hold at peak: {svc.replicas.max} replicas × "
            f"{ev.requests_per_s_per_replica:.2f} req/s = {capacity:.1f} req/s < peak {peak:g} req/s (one replica: "
            f"{ev.row.output_tokens_per_s_per_gpu:,g} output tok/s per GPU × {svc.gpus_per_replica} ÷ "
            f"{svc.traffic.output_tokens} output tokens; {ev.row.cite()})",
            svc.replicas.max,
            allowed=f"at least {need}",
            fix=f"raise replicas.max to {need} (and the pool's maxNodes to match)",
        )
    if not ev.same_server:
        at.warn(
            "server",
            f"the only evidence for this SLO was measured with {ev.row.software}, not "
            f"{svc.server.value}: {ev.row.cite()}",
            svc.server.value,
            allowed=None,
            fix="load-test the service with its own server before relying on the SLO",
        )


def check_cold_start(
    at: Issues, cloud: Cloud, svc: Service, card: ModelCard, pool: NodePool, gpu: GpuModel, polling_s: int = 15
) -> None:
    """A replica added for a burst must be serving before the burst peaks, unless replicas.min already carry it."""
    ev = evidence(svc, gpu)
    if ev is not None and svc.replicas.min * ev.requests_per_s_per_replica >= svc.traffic.peak_requests_per_second:
        return
    rs = replica_start(cloud, pool, svc, card, node_running=pool.min_nodes == pool.max_nodes)
    # the saturation is seen after up to one scrape (GKE 15 s, EKS AMP's minimum 30 s) and one KEDA poll
    polls = scale_up_seen_s(cloud, polling_s)
    total = rs.total_s + polls
    if total > svc.traffic.ramp_seconds:
        source = (
            ""
            if svc.model_uri.startswith(("gs://", "s3://"))
            else " (measured streaming from a bucket; a Hugging Face download is slower and not measured)"
        )
        at.warn(
            ("traffic", "rampSeconds"),
            f"a new replica serves after ≈{total:.0f} s (node {rs.node_s:.0f} s "
            f"+ image {rs.pull_s:.0f} s ({rs.pull_how}) + pod start {rs.pod_s:.0f} s "
            f"+ weights and server start {rs.load_s:.0f} s{source} + metric polls {polls} s), longer than the "
            f"{svc.traffic.ramp_seconds} s ramp to peak: requests queue past the SLO until it is up",
            svc.traffic.ramp_seconds,
            allowed=f"a ramp of at least {total:.0f} s, or replicas.min carrying the peak",
            fix="raise replicas.min, keep warm nodes (pool minNodes), or shorten the start (podStart image "
            "streaming / pre-pull)",
        )


def check_weights_per_rank(at: Issues, svc: Service, card: ModelCard) -> None:
    """vLLM v0.10.0's runai_streamer reads the whole checkpoint in every rank: flag the bytes a node really reads,
    the load estimate and the startup probe it gets (``stacks/plan/serving_load.py``)."""
    ranks = ranks_per_node(svc)
    if not streams_every_rank(svc) or ranks < 2:
        return
    full = card.weights_bytes(svc.precision.value) / 1e9
    load = weights_load_s(card, svc)
    probe = startup_probe_budget_s(card, svc)
    at.warn(
        "modelUri",
        f"vLLM v0.10.0 streams the whole checkpoint in each of the {ranks} ranks per node (no "
        f"distributed streaming): {ranks} × {full:,.0f} GB = {bytes_per_node_gb(card, svc):,.0f} GB per node, "
        f"≈{load:,.0f} s if its ranks share the one measured streamer rate ({RUNAI_STREAMER_LOAD.weights_gb:g} GB "
        f"in {RUNAI_STREAMER_LOAD.to_gpu_s:g} s from S3; not measured through Cloud Storage FUSE or with "
        f"concurrent readers); the startup probe allows {probe:,} s and Kueue's pods-ready timeout follows",
        svc.model_uri,
        allowed=None,
        fix="measure one replica's load; cut it with a Cloud Storage FUSE file cache with parallel downloads, "
        "Hyperdisk ML or local SSD, or a vLLM with distributed streaming",
    )
