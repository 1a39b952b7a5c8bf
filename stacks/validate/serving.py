"""Rules of ``gpu-cluster:serving``: names, models, pools and replica shapes; then the checks a reviewer asks for
before deploy, each in numbers: the model fits (weights + KV cache ≤ GPU memory × GPUs × the server's share), the SLO
is reachable at peak from a measured throughput row (or flagged "no evidence"), a replica starts before the traffic
ramp is over, and serving is protected from training (not on spot, priority above training, its own Kueue quota that
training may borrow but never take, never inside Slurm's NodeSets). Reports through ``Issues``; never raises."""
from __future__ import annotations

import math
import re
from typing import Any

from catalog import CapacityType, Catalog, Cloud, GpuModel
from catalog.serving import RUNAI_STREAMER_LOAD, ModelCard
from catalog.serving import load_models
from stacks.plan.serving import (SERVING_QUEUE, concurrency, evidence, fit, model_card, replica_start,
                                 serving_gpus, unrendered_metrics_source)
from stacks.plan.kueue_pods import SERVING_DEFAULT_CLUSTER_QUEUE
from stacks.plan.serving_load import (bytes_per_node_gb, ranks_per_node, startup_probe_budget_s,
                                      streams_every_rank, weights_load_s)
from stacks.plan.serving_metrics import scale_up_seen_s
from stacks.validate.issues import Issues, allowed_list, choice_fix
from stacks.validate.scheduling import LABEL_RULE, RESERVED_NAMESPACES, PoolCapacity, pool_capacities
from stacks.spec.scheduling import SchedulingSpec, Workload
from stacks.spec.serving import Service, ServingSpec
from stacks.spec.stack import NodePool

DNS_1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
SERVICE_NAME_MAX = 40
"""Objects are named ``<service>-<role>`` (``-epp``, ``-pool``, ``-route``): room for the suffixes in 63."""
HF_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
URI_SCHEME = {Cloud.GCP: "gs://", Cloud.AWS: "s3://"}


def check_serving(issues: Issues, cat: Catalog, cloud: Cloud | None, raw_pools: Any,
                  pools: list[tuple[int, NodePool]], serving: ServingSpec, sched: SchedulingSpec | None,
                  project: str | None = None, region: str | None = None, account: str | None = None) -> None:
    where = issues.at("serving")
    known = [p["name"] for p in raw_pools if isinstance(p, dict) and isinstance(p.get("name"), str)] \
        if isinstance(raw_pools, list) else []
    by_name = {pool.name: pool for _, pool in pools}
    caps = pool_capacities(cat, cloud, pools)
    if not _label(serving.namespace) or serving.namespace in RESERVED_NAMESPACES \
            or serving.namespace.startswith("kube-"):
        where.error("namespace", "not a namespace serving may use", serving.namespace,
                    allowed=f"{LABEL_RULE}, except {', '.join(RESERVED_NAMESPACES)} and kube-*",
                    fix="use a namespace of its own, e.g. serving")
    seen: dict[str, int] = {}
    for i, svc in enumerate(serving.services):
        at = where.at("services", i)
        if not _label(svc.name) or len(svc.name) > SERVICE_NAME_MAX:
            at.error("name", "not a valid service name", svc.name,
                     allowed=f"{LABEL_RULE}, at most {SERVICE_NAME_MAX} characters",
                     fix="rename the service, e.g. 'chat'")
        if svc.name in seen:
            at.error("name", f"duplicate service name (same as services[{seen[svc.name]}])", svc.name,
                     allowed="unique service names", fix="rename one of the services")
        seen.setdefault(svc.name, i)
        _check_shape(at, cloud, svc)
        if svc.pool not in known:
            at.error("pool", "no GPU pool with this name", svc.pool, allowed=allowed_list(known) or "no pools",
                     fix=choice_fix("the pool", svc.pool, known, " (a name from nodePools)"))
            continue
        cap, pool = caps.get(svc.pool), by_name.get(svc.pool)
        if cap is None or pool is None or cloud is None:
            continue  # the pool's own error says why
        machine = cat.resolve(cloud, pool.machine_type, pool.accelerator.type if pool.accelerator else None,
                              pool.accelerator.count if pool.accelerator else None)
        if machine is None:
            continue
        if not _check_placement(at, svc, pool, cap.index, machine.gpus):
            continue
        card = model_card(svc)
        if card is not None:
            _check_fit(at, svc, card, machine.gpu_memory_gib_per_gpu, machine.machine_type)
            _check_slo(at, svc, machine.gpu_model)
            _check_cold_start(at, cloud, svc, card, pool, machine.gpu_model,
                              serving.autoscaling.polling_interval_seconds)
            _check_weights_per_rank(at, svc, card)
        _check_protected(at, svc, pool, cap.index)
    if cloud == Cloud.AWS and serving.autoscaling.prometheus_url is None:
        where.error(("autoscaling", "prometheusUrl"), "EKS has no Prometheus KEDA can query by default, so the "
                    "services could not scale on vLLM's queue depth", None,
                    allowed="https://aps-workspaces.<region>.amazonaws.com/workspaces/<id> (or any PromQL URL)",
                    fix="create an Amazon Managed Service for Prometheus workspace scraping the serving namespace "
                    "and give its URL")
    elif serving.autoscaling.prometheus_url is not None \
            and not serving.autoscaling.prometheus_url.startswith("https://"):
        where.error(("autoscaling", "prometheusUrl"), "not an https URL", serving.autoscaling.prometheus_url,
                    allowed="https://…", fix="give the PromQL endpoint's https URL")
    _check_metrics_source(where, cloud, serving, project, region, account)
    _check_priority(where, serving, sched)
    if sched is not None:
        _check_queue(where, serving, sched, caps)


def _check_metrics_source(where: Issues, cloud: Cloud | None, serving: ServingSpec, project: str | None,
                          region: str | None, account: str | None) -> None:
    if cloud is None or region is None:
        return
    why = unrendered_metrics_source(cloud, serving, project, region, account)
    if why is None or (cloud == Cloud.AWS and serving.autoscaling.prometheus_url is None):
        return  # the missing EKS URL is an error above
    where.warn(("autoscaling", "prometheusUrl"), f"KEDA's metric source is not one gpu-cluster fills and grants: "
               f"{why}; if it holds no vLLM metrics, or KEDA may not read it, every service stays at replicas.min "
               "(the what-if runs them fixed at min)", serving.autoscaling.prometheus_url,
               allowed="GKE: omitted (Managed Service for Prometheus); EKS: https://aps-workspaces.<region>.amazonaws.com"
               "/workspaces/<id> with accountId set",
               fix="leave prometheusUrl out on GKE, or give an AMP workspace of the stack's region on EKS (the "
               "collector and KEDA's grant are then created)")


def _label(name: str) -> bool:
    return len(name) <= 63 and DNS_1123_LABEL.fullmatch(name) is not None


def _check_shape(at: Issues, cloud: Cloud | None, svc: Service) -> None:
    if (svc.model is None) == (svc.custom_model is None):
        at.error("model", "set exactly one of model and customModel",
                 {"model": svc.model, "customModel": svc.custom_model is not None},
                 allowed=f"model: one of {allowed_list(load_models())}; or customModel with your model's numbers",
                 fix="name a catalog model, or describe yours under customModel (parameters, layers, kvHeads, headDim)")
    elif svc.model is not None and svc.model not in load_models():
        at.error("model", "not a model in the catalog (catalog/data/models.csv)", svc.model,
                 allowed=allowed_list(load_models()),
                 fix=choice_fix("the model", svc.model, list(load_models()), ", or describe it under customModel"))
    scheme = URI_SCHEME.get(cloud) if cloud is not None else None
    if not (svc.model_uri.startswith(scheme or "\0") or HF_REPO.fullmatch(svc.model_uri)):
        at.error("modelUri", "not a place the weights can come from on this cloud", svc.model_uri,
                 allowed=f"{scheme or 'gs:// or s3://'}<bucket>/<path>, or a Hugging Face repo ID <org>/<name>",
                 fix=f"copy the weights to a bucket in the stack's region and give its {scheme or 'URI'} path")
    if svc.replicas.min == 0:
        at.error(("replicas", "min"), "scale to zero drops requests: a Service does not buffer them while no replica "
                 "is ready, and a cold replica takes minutes", 0, allowed="1 or more",
                 fix="keep at least one replica (replicas.min: 1)")
    if svc.replicas.min > svc.replicas.max:
        at.error(("replicas", "min"), f"more than replicas.max ({svc.replicas.max})", svc.replicas.min,
                 allowed=f"0 … {svc.replicas.max}", fix="lower replicas.min or raise replicas.max")
    profile = svc.traffic.daily_profile
    if profile and (len(profile) != 24 or any(not 0 <= x <= 1 for x in profile)):
        at.error(("traffic", "dailyProfile"), "needs 24 hourly shares of the peak, each 0 … 1", profile,
                 allowed="a list of 24 numbers in 0 … 1 (hour 0 = 00:00 UTC)",
                 fix="give one share per hour, 1 at the peak hour, or leave it out for the peak all day")
    request = svc.traffic.input_tokens + svc.traffic.output_tokens
    if request > svc.max_context_tokens:
        at.error("maxContextTokens", f"shorter than a mean request ({svc.traffic.input_tokens} input + "
                 f"{svc.traffic.output_tokens} output = {request} tokens)", svc.max_context_tokens,
                 allowed=f"at least {request}", fix=f"raise maxContextTokens to {request} or more")


def _check_placement(at: Issues, svc: Service, pool: NodePool, index: int, gpus_per_node: int) -> bool:
    """GPUs per replica must split evenly over its nodes and fit one node each; multi-node replicas take whole
    nodes of a multiNode pool. False: the later checks would rest on an impossible shape."""
    n, g = svc.nodes_per_replica, svc.gpus_per_replica
    ok = True
    if g % n:
        at.error("gpusPerReplica", f"does not split evenly over nodesPerReplica ({n})", g,
                 allowed=f"a multiple of {n}", fix=f"use {n * math.ceil(g / n)} GPUs, or change nodesPerReplica")
        ok = False
    elif g // n > gpus_per_node:
        at.error("gpusPerReplica", f"{g // n} GPUs per node, and a {pool.machine_type} node has {gpus_per_node}", g,
                 allowed=f"at most {gpus_per_node * n} with nodesPerReplica {n}",
                 fix=f"set nodesPerReplica: {math.ceil(g / gpus_per_node)} (a LeaderWorkerSet), or use a larger machine")
        ok = False
    elif n > 1 and g // n != gpus_per_node:
        at.error("gpusPerReplica", f"a replica spanning {n} nodes takes whole nodes ({gpus_per_node} GPUs each)", g,
                 allowed=f"{gpus_per_node * n}", fix=f"set gpusPerReplica: {gpus_per_node * n}")
        ok = False
    if n > 1 and not pool.multi_node:
        at.error("nodesPerReplica", f"pool '{pool.name}' is not a multiNode pool: no compact placement or GPU fabric "
                 "between its nodes, so tensors crossing nodes would crawl", n, allowed="1 on this pool",
                 fix=f"set nodePools[{index}].multiNode: true, or serve on one node (nodesPerReplica: 1)")
        ok = False
    nodes_max = svc.replicas.max * n if n > 1 else math.ceil(svc.replicas.max * g / gpus_per_node)
    if nodes_max > pool.max_nodes:
        at.error(("replicas", "max"), f"{svc.replicas.max} replicas need {nodes_max} nodes, and pool '{pool.name}' "
                 f"has at most {pool.max_nodes}", svc.replicas.max,
                 allowed=f"at most {pool.max_nodes * gpus_per_node // g if n == 1 else pool.max_nodes // n}",
                 fix=f"lower replicas.max, or raise nodePools[{index}].maxNodes to {nodes_max}")
    return ok


def _check_fit(at: Issues, svc: Service, card: ModelCard, gpu_gib: float, machine: str) -> None:
    f = fit(svc, card, gpu_gib)
    if f.fits:
        return
    need_gpus = math.ceil(f.needed_gib / (gpu_gib * svc.gpu_memory_utilization))
    at.error("gpusPerReplica",
             f"{card.model} in {svc.precision.value} does not fit: weights {f.weights_gib:.1f} GiB + KV cache "
             f"{f.kv_gib:.1f} GiB ({f.kv_tokens:,} tokens × {f.kv_kib_per_token:g} KiB: "
             f"{concurrency(svc)} concurrent requests × {svc.traffic.input_tokens + svc.traffic.output_tokens} tokens, "
             f"or one {svc.max_context_tokens:,}-token context) = {f.needed_gib:.1f} GiB, and {svc.gpus_per_replica} × "
             f"{gpu_gib:g} GiB ({machine}) × {svc.gpu_memory_utilization:g} (server memory share) = "
             f"{f.budget_gib:.1f} GiB: {f.missing_gib:.1f} GiB missing", svc.gpus_per_replica,
             allowed=f"at least {need_gpus} GPUs of this type per replica",
             fix=f"set gpusPerReplica: {need_gpus} (tensor parallel), use fp8 weights, lower maxConcurrency or "
             "maxContextTokens, or a GPU with more memory")


def _check_slo(at: Issues, svc: Service, gpu: GpuModel) -> None:
    ev = evidence(svc, gpu)
    if ev is None:
        what = svc.model or "a custom model"
        at.warn("slo", f"no evidence: no measured run of {what} on {gpu.value} in {svc.precision.value} held p99 TTFT "
                f"≤ {svc.slo.ttft_p99_ms:g} ms and TPOT ≤ {svc.slo.tpot_p99_ms:g} ms "
                "(catalog/data/serving-throughput.csv); whether the SLO holds at "
                f"{svc.traffic.peak_requests_per_second:g} req/s is unknown, not assumed",
                {"ttftP99Ms": svc.slo.ttft_p99_ms, "tpotP99Ms": svc.slo.tpot_p99_ms},
                allowed="a model/GPU/precision/SLO a source measured",
                fix="load-test one replica at the SLO and size replicas.max from it, or add the measured row "
                "(with its source) to catalog/data/serving-throughput.csv")
        return
    capacity = svc.replicas.max * ev.requests_per_s_per_replica
    peak = svc.traffic.peak_requests_per_second
    if capacity < peak:
        need = math.ceil(peak / ev.requests_per_s_per_replica)
        at.error(("replicas", "max"), f"the SLO does not hold at peak: {svc.replicas.max} replicas × "
                 f"{ev.requests_per_s_per_replica:.2f} req/s = {capacity:.1f} req/s < peak {peak:g} req/s (one replica: "
                 f"{ev.row.output_tokens_per_s_per_gpu:,g} output tok/s per GPU × {svc.gpus_per_replica} ÷ "
                 f"{svc.traffic.output_tokens} output tokens; {ev.row.cite()})", svc.replicas.max,
                 allowed=f"at least {need}", fix=f"raise replicas.max to {need} (and the pool's maxNodes to match)")
    if not ev.same_server:
        at.warn("server", f"the only evidence for this SLO was measured with {ev.row.software}, not "
                f"{svc.server.value}: {ev.row.cite()}", svc.server.value, allowed=None,
                fix="load-test the service with its own server before relying on the SLO")


def _check_cold_start(at: Issues, cloud: Cloud, svc: Service, card: ModelCard, pool: NodePool,
                      gpu: GpuModel, polling_s: int = 15) -> None:
    """A replica added for a burst must be serving before the burst peaks, unless replicas.min already carry it."""
    ev = evidence(svc, gpu)
    if ev is not None and svc.replicas.min * ev.requests_per_s_per_replica >= svc.traffic.peak_requests_per_second:
        return
    rs = replica_start(cloud, pool, svc, card, node_running=pool.min_nodes == pool.max_nodes)
    # the saturation is seen after up to one scrape (GKE 15 s, EKS AMP's minimum 30 s) and one KEDA poll
    polls = scale_up_seen_s(cloud, polling_s)
    total = rs.total_s + polls
    if total > svc.traffic.ramp_seconds:
        source = "" if svc.model_uri.startswith(("gs://", "s3://")) else \
            " (measured streaming from a bucket; a Hugging Face download is slower and not measured)"
        at.warn(("traffic", "rampSeconds"), f"a new replica serves after ≈{total:.0f} s (node {rs.node_s:.0f} s "
                f"+ image {rs.pull_s:.0f} s ({rs.pull_how}) + pod start {rs.pod_s:.0f} s "
                f"+ weights and server start {rs.load_s:.0f} s{source} + metric polls {polls} s), longer than the "
                f"{svc.traffic.ramp_seconds} s ramp to peak: requests queue past the SLO until it is up",
                svc.traffic.ramp_seconds, allowed=f"a ramp of at least {total:.0f} s, or replicas.min carrying the peak",
                fix="raise replicas.min, keep warm nodes (pool minNodes), or shorten the start (podStart image "
                "streaming / pre-pull)")


def _check_weights_per_rank(at: Issues, svc: Service, card: ModelCard) -> None:
    """vLLM v0.10.0's runai_streamer reads the whole checkpoint in every rank: flag the bytes a node really reads,
    the load estimate and the startup probe it gets (``stacks/plan/serving_load.py``)."""
    ranks = ranks_per_node(svc)
    if not streams_every_rank(svc) or ranks < 2:
        return
    full = card.weights_bytes(svc.precision.value) / 1e9
    load = weights_load_s(card, svc)
    probe = startup_probe_budget_s(card, svc)
    at.warn("modelUri", f"vLLM v0.10.0 streams the whole checkpoint in each of the {ranks} ranks per node (no "
            f"distributed streaming): {ranks} × {full:,.0f} GB = {bytes_per_node_gb(card, svc):,.0f} GB per node, "
            f"≈{load:,.0f} s if its ranks share the one measured streamer rate ({RUNAI_STREAMER_LOAD.weights_gb:g} GB "
            f"in {RUNAI_STREAMER_LOAD.to_gpu_s:g} s from S3; not measured through Cloud Storage FUSE or with "
            f"concurrent readers); the startup probe allows {probe:,} s and Kueue's pods-ready timeout follows",
            svc.model_uri, allowed=None,
            fix="measure one replica's load; cut it with a Cloud Storage FUSE file cache with parallel downloads, "
            "Hyperdisk ML or local SSD, or a vLLM with distributed streaming")


def _check_protected(at: Issues, svc: Service, pool: NodePool, index: int) -> None:
    kind = pool.capacity.type
    if kind in (CapacityType.SPOT, CapacityType.FLEX_START):
        why = "spot nodes can be reclaimed by the cloud at any time (30 s to 2 min notice)" \
            if kind == CapacityType.SPOT else "flex-start nodes are deleted after maxRunHours and come only when queued"
        at.error("pool", f"pool '{pool.name}' is {kind.value}-only: {why}, taking every replica at once", svc.pool,
                 allowed="a pool on on-demand or reservation capacity",
                 fix=f"serve from an on-demand or reservation pool (nodePools[{index}].capacity.type)")


def _check_priority(where: Issues, serving: ServingSpec, sched: SchedulingSpec | None) -> None:
    classes = sched.priority_classes if sched is not None else []
    top = max(classes, key=lambda pc: pc.value, default=None)
    if top is not None and serving.priority <= top.value:
        where.error("priority", f"not above training's highest priority class ('{top.name}': {top.value}), so "
                    "training could preempt serving", serving.priority, allowed=f"more than {top.value}",
                    fix=f"set serving.priority above {top.value} (default 1000000)")


def _check_queue(where: Issues, serving: ServingSpec, sched: SchedulingSpec,
                 caps: dict[str, PoolCapacity]) -> None:
    if sched.workload == Workload.SLURM:
        slurm_pools = {q.pool for queue in sched.queues for q in queue.quotas}
        for i, svc in enumerate(serving.services):
            if svc.pool in slurm_pools:
                where.error(("services", i, "pool"), f"pool '{svc.pool}' is a Slurm NodeSet: slurmd pods hold its "
                            "nodes' GPUs, so a serving pod there would either wait forever or take GPUs Slurm thinks "
                            "are free", svc.pool, allowed="a GPU pool no Slurm queue has quota on",
                            fix="add a pool for serving (on-demand or reservation) outside scheduling.queues")
        return
    for taken in (SERVING_QUEUE, SERVING_DEFAULT_CLUSTER_QUEUE):
        if any(q.name == taken for q in sched.queues):
            where.error("services", f"scheduling.queues already has a queue named '{taken}', the name of one of "
                        f"serving's own ClusterQueues ('{SERVING_QUEUE}' and '{SERVING_DEFAULT_CLUSTER_QUEUE}')", taken,
                        allowed="training queues with other names",
                        fix=f"rename that training queue (serving's queues are always '{SERVING_QUEUE}' and "
                        f"'{SERVING_DEFAULT_CLUSTER_QUEUE}')")
    if sched.cohort is None:
        where.warn("services", "scheduling.cohort is not set: serving's idle GPUs cannot be lent to training, so they "
                   "stay idle between peaks", None, allowed=None, fix="set scheduling.cohort (e.g. cohort: ml)")
    if sched.overcommit:
        return
    for pool, (_, hi) in serving_gpus(serving).items():
        cap = caps.get(pool)
        if cap is None:
            continue
        training = sum(q.gpus for queue in sched.queues for q in queue.quotas if q.pool == pool)
        if training + hi > cap.max_gpus:
            i = next(i for i, s in enumerate(serving.services) if s.pool == pool)
            where.error(("services", i, "replicas", "max"),
                        f"pool '{pool}': training quotas ({training} GPUs) + serving at max replicas ({hi} GPUs) = "
                        f"{training + hi}, more than the pool has at maxNodes ({cap.max_nodes} × "
                        f"{cap.gpus_per_node} = {cap.max_gpus})", training + hi, allowed=f"at most {cap.max_gpus}",
                        fix="lower training quotas or serving's replicas.max (serving lends its idle GPUs to the "
                        "cohort, so training keeps them busy), or set scheduling.overcommit: true")
