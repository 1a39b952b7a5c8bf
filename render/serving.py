"""Serving spec + pool facts -> the Kubernetes objects of each inference service (plain dicts, as applied). Pure.

Per service: the vLLM server as a Deployment (one node per replica) or a LeaderWorkerSet (a group of nodes per
replica), a ClusterIP Service, a PodDisruptionBudget, and a KEDA ScaledObject that scales on vLLM's own signals
(``vllm:num_requests_waiting`` per replica and ``vllm:kv_cache_usage_perc``). On GKE also a PodMonitoring (Managed
Service for Prometheus scrapes vLLM), the values of the ``inferencepool`` chart (InferencePool + endpoint picker) and an
HTTPRoute from the stack's inference Gateway to the pool. Stack-wide: the PriorityClass above training and the
namespace's NetworkPolicies. With Kueue, pods carry the serving LocalQueue and priority labels so every replica is
admitted against serving's own quota (``stacks/plan/serving.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from catalog import Cloud
from stacks.plan.facts import PoolFacts
from render.kueue import API_VERSION as KUEUE_API_VERSION, GPU_RESOURCE
from render.serving_identity import (GCS_FUSE_DRIVER, WEIGHTS_MOUNT, MetricsAccess, WeightsAccess, metrics_access,
                                     pod_meta, service_account, service_account_name, weights_access)
from stacks.plan.serving import (PORT, SERVING_PRIORITY_CLASS, SERVING_QUEUE, bucket_path, concurrency, evidence,
                                 image, kv_precision, model_card, running_target)
from stacks.plan.serving_load import STARTUP_PROBE_PERIOD_S, startup_probe_failures
from stacks.plan.kueue_pods import SERVING_DEFAULT_CLUSTER_QUEUE as DEFAULT_CLUSTER_QUEUE
from stacks.plan.serving_metrics import GMP_SCRAPE_S
from stacks.spec.serving import Service, ServingSpec

MANAGED = {"app.kubernetes.io/part-of": "gpu-cluster", "app.kubernetes.io/managed-by": "pulumi"}
EPP_PORT = 9002
"""The endpoint picker's ext-proc port (inferencepool chart v1.5.0 values ``inferenceExtension.extProcPort``)."""
EPP_HEALTH_PORT = 9003
GATEWAY_NAME = "inference-gateway"
GKE_GATEWAY_CLASS = "gke-l7-rilb"
"""GKE's regional internal Application Load Balancer class, which GKE Inference Gateway supports for InferencePools."""
MULTI_NODE_SCRIPT = "/vllm-workspace/examples/online_serving/multi-node-serving.sh"
"""vLLM's helper that starts a Ray head (waiting for ``--ray_cluster_size`` nodes) or joins one
(vllm-project/vllm examples/online_serving/multi-node-serving.sh; https://docs.vllm.ai/en/stable/examples/online_serving/multi-node-serving/)."""
TRIGGER_AUTH = "prometheus"
DEFAULT_LOCAL_QUEUE = "default"
"""Kueue's defaulting name: a pod without a queue label in a namespace with a LocalQueue of this name is its."""

DRAIN_SECONDS = 60
"""Grace period on scale-down: requests in flight finish (a decode of 200 tokens at 100 ms/token takes 20 s)."""


@dataclass
class ServiceObjects:
    name: str
    workload: dict[str, Any]
    service: dict[str, Any]
    pdb: dict[str, Any]
    scaled_object: dict[str, Any]
    pod_monitoring: dict[str, Any] | None = None
    inference_pool_values: dict[str, Any] | None = None
    """GKE: values of the ``inferencepool`` chart (release named after the service: InferencePool ``<name>``)."""
    route: dict[str, Any] | None = None
    service_account: dict[str, Any] | None = None
    """The pods' own ServiceAccount (the weights identity is bound to it)."""
    weights: WeightsAccess | None = None
    """None: the weights come from Hugging Face (no bucket identity)."""

    def objects(self) -> list[dict[str, Any]]:
        return [o for o in (self.service_account, self.workload, self.service, self.pdb, self.scaled_object,
                            self.pod_monitoring, self.route) if o is not None]


@dataclass
class ServingObjects:
    namespace: dict[str, Any] | None
    """None when Kueue creates the namespace (it holds serving's LocalQueue)."""
    priority_class: dict[str, Any]
    policies: list[dict[str, Any]]
    gateway: dict[str, Any] | None
    trigger_auth: dict[str, Any]
    services: list[ServiceObjects] = field(default_factory=list)
    default_queue: list[dict[str, Any]] = field(default_factory=list)
    """With Kueue: LocalQueue ``default`` in the serving namespace, for its pods that name no queue (the endpoint
    pickers the inferencepool chart runs, which take no GPU), and the plain flavor and ClusterQueue it points at."""
    metrics: MetricsAccess = field(default_factory=MetricsAccess)
    """KEDA's read access to the metrics its triggers query."""

    def objects(self) -> list[dict[str, Any]]:
        head = [o for o in (self.namespace, self.priority_class, self.trigger_auth, *self.default_queue)
                if o is not None]
        return [*head, *self.policies, *([self.gateway] if self.gateway else []),
                *(o for s in self.services for o in s.objects())]


def _meta(name: str, namespace: str | None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {**MANAGED, **(labels or {})}}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def app_labels(svc: Service) -> dict[str, str]:
    return {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": svc.name}


def _vllm_args(svc: Service, served_model: str) -> list[str]:
    tp = svc.gpus_per_replica // svc.nodes_per_replica
    args = ["vllm", "serve", served_model, "--port", str(PORT), "--served-model-name", svc.name,
            "--tensor-parallel-size", str(tp), "--max-model-len", str(svc.max_context_tokens),
            "--max-num-seqs", str(concurrency(svc)), "--gpu-memory-utilization", f"{svc.gpu_memory_utilization:g}"]
    if svc.nodes_per_replica > 1:
        args += ["--pipeline-parallel-size", str(svc.nodes_per_replica), "--distributed-executor-backend", "ray"]
    if kv_precision(svc).value == "fp8":
        args += ["--kv-cache-dtype", "fp8"]
    if bucket_path(svc.model_uri) is not None:
        # concurrent safetensors reads to GPU memory: from s3:// directly, from the FUSE mount on GKE
        args += ["--load-format", "runai_streamer"]
    return args


def _container(svc: Service, command: list[str], gpus: int, serving: bool) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": "vllm", "image": image(svc), "command": ["/bin/sh", "-c", " ".join(command)],
        "resources": {"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],  # NCCL and the engine's workers share memory
        "securityContext": {"allowPrivilegeEscalation": False},
    }
    if serving:
        c["ports"] = [{"name": "http", "containerPort": PORT, "protocol": "TCP"}]
        c["readinessProbe"] = {"httpGet": {"path": "/health", "port": PORT}, "periodSeconds": 5}
        # weights load for minutes on a cold node; longer when every rank streams a large checkpoint
        c["startupProbe"] = {"httpGet": {"path": "/health", "port": PORT}, "periodSeconds": STARTUP_PROBE_PERIOD_S,
                             "failureThreshold": startup_probe_failures(model_card(svc), svc)}
        c["lifecycle"] = {"preStop": {"sleep": {"seconds": 10}}}  # leave the endpoints before the server stops
    where = bucket_path(svc.model_uri)
    if where is None:
        c["env"] = [{"name": "HF_HUB_OFFLINE", "value": "0"}]
    elif where.scheme == "gs":
        c["volumeMounts"].append({"name": "weights", "mountPath": WEIGHTS_MOUNT, "readOnly": True})
    return c


def _pod_spec(svc: Service, pool: PoolFacts, container: dict[str, Any]) -> dict[str, Any]:
    volumes: list[dict[str, Any]] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]
    where = bucket_path(svc.model_uri)
    if where is not None and where.scheme == "gs":
        # the bucket's model prefix only (only-dir), read-only; the FUSE sidecar reads as the pod's ServiceAccount
        options = "implicit-dirs" + (f",only-dir={where.prefix}" if where.prefix else "")
        volumes.append({"name": "weights", "csi": {"driver": GCS_FUSE_DRIVER, "readOnly": True, "volumeAttributes": {
            "bucketName": where.bucket, "mountOptions": options}}})
    return {
        "serviceAccountName": service_account_name(svc),
        "priorityClassName": SERVING_PRIORITY_CLASS,
        "nodeSelector": dict(pool.pool_label),
        "tolerations": [dict(t) for t in pool.tolerations],
        "terminationGracePeriodSeconds": DRAIN_SECONDS,
        "containers": [container],
        "volumes": volumes,
    }


def _pod_labels(svc: Service, kueue: bool) -> dict[str, str]:
    labels = app_labels(svc)
    if kueue:  # admitted against serving's ClusterQueue, at serving's priority
        labels |= {"kueue.x-k8s.io/queue-name": SERVING_QUEUE, "kueue.x-k8s.io/priority-class": SERVING_PRIORITY_CLASS}
    return labels


def _served_model(svc: Service) -> str:
    """What vLLM loads: the FUSE mount on GKE (vLLM v0.10.0 reads no gs://), the s3:// URI on EKS (its
    ``runai_streamer`` loader streams from S3), a Hugging Face repo ID as given."""
    where = bucket_path(svc.model_uri)
    return WEIGHTS_MOUNT if where is not None and where.scheme == "gs" else svc.model_uri


def _deployment(svc: Service, pool: PoolFacts, ns: str, kueue: bool) -> dict[str, Any]:
    labels = _pod_labels(svc, kueue)
    container = _container(svc, _vllm_args(svc, _served_model(svc)), svc.gpus_per_replica, True)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(svc.name, ns, labels),
            "spec": {"replicas": svc.replicas.min, "selector": {"matchLabels": app_labels(svc)},
                     # one replica at a time: a surge replica needs GPUs that may be lent to training
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
                     "template": {"metadata": pod_meta(svc, labels), "spec": _pod_spec(svc, pool, container)}}}


def _leader_worker_set(svc: Service, pool: PoolFacts, ns: str, kueue: bool) -> dict[str, Any]:
    labels = _pod_labels(svc, kueue)
    per_node = svc.gpus_per_replica // svc.nodes_per_replica
    leader_cmd = ["bash", MULTI_NODE_SCRIPT, "leader", "--ray_cluster_size=$(LWS_GROUP_SIZE);",
                  *_vllm_args(svc, _served_model(svc))]
    worker_cmd = ["bash", MULTI_NODE_SCRIPT, "worker", "--ray_address=$(LWS_LEADER_ADDRESS)"]
    leader = {"metadata": pod_meta(svc, labels),
              "spec": _pod_spec(svc, pool, _container(svc, leader_cmd, per_node, True))}
    worker = {"metadata": pod_meta(svc, labels),
              "spec": _pod_spec(svc, pool, _container(svc, worker_cmd, per_node, False))}
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": _meta(svc.name, ns, labels),
            "spec": {"replicas": svc.replicas.min, "startupPolicy": "LeaderCreated",
                     "rolloutStrategy": {"type": "RollingUpdate",
                                         "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0}},
                     "leaderWorkerTemplate": {
                         "size": svc.nodes_per_replica,
                         # a worker lost mid-decode leaves the Ray group broken: restart the whole group, but only
                         # once every pod has started (slow image pulls would otherwise loop the group)
                         "restartPolicy": "RecreateGroupAfterStart",
                         "leaderTemplate": leader, "workerTemplate": worker}}}


def _service(svc: Service, ns: str) -> dict[str, Any]:
    selector = app_labels(svc)
    if svc.nodes_per_replica > 1:
        selector = {**selector, "leaderworkerset.sigs.k8s.io/worker-index": "0"}  # only leaders serve HTTP
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(svc.name, ns, app_labels(svc)),
            "spec": {"type": "ClusterIP", "selector": selector,
                     "ports": [{"name": "http", "port": PORT, "targetPort": PORT, "protocol": "TCP"}]}}


def _pdb(svc: Service, ns: str) -> dict[str, Any]:
    """Voluntary disruptions (node drains, upgrades) never take serving below its minimum replicas."""
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": _meta(svc.name, ns),
            "spec": {"minAvailable": svc.replicas.min * svc.nodes_per_replica,
                     "selector": {"matchLabels": app_labels(svc)}}}


def prometheus_address(cloud: Cloud, project: str | None, override: str | None) -> str | None:
    if override:
        return override
    if cloud == Cloud.GCP and project:  # Managed Service for Prometheus' query API (PromQL over HTTP)
        return f"https://monitoring.googleapis.com/v1/projects/{project}/location/global/prometheus"
    return None


def _scaled_object(svc: Service, serving: ServingSpec, ns: str, address: str | None,
                   aws_region: str | None, running: int | None, cluster: str = "") -> dict[str, Any]:
    a = serving.autoscaling
    kind = ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet") if svc.nodes_per_replica > 1 else ("apps/v1",
                                                                                                  "Deployment")
    # GMP spans the project and an AMP workspace may be shared: only this cluster's series (GMP labels them with the
    # cluster's name, the AWS managed collector's configuration adds the same label)
    match = (f'cluster="{cluster}",' if cluster else "") + f'namespace="{ns}",model_name="{svc.name}"'

    def trigger(name: str, query: str, threshold: str, metric_type: str) -> dict[str, Any]:
        t: dict[str, Any] = {"type": "prometheus", "name": name, "metricType": metric_type,
                             "metadata": {"serverAddress": address or "", "query": query, "threshold": threshold},
                             "authenticationRef": {"name": TRIGGER_AUTH}}
        if aws_region:
            t["metadata"]["awsRegion"] = aws_region  # SigV4 to Amazon Managed Service for Prometheus
        return t

    return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": _meta(svc.name, ns),
            "spec": {"scaleTargetRef": {"apiVersion": kind[0], "kind": kind[1], "name": svc.name},
                     "minReplicaCount": svc.replicas.min, "maxReplicaCount": svc.replicas.max,
                     "pollingInterval": a.polling_interval_seconds, "cooldownPeriod": a.cooldown_seconds,
                     "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {"scaleDown": {
                         "stabilizationWindowSeconds": a.cooldown_seconds}}}},
                     "triggers": [
                         # requests waiting summed over replicas, divided by replicas by the HPA (AverageValue)
                         trigger("waiting", f"sum(vllm:num_requests_waiting{{{match}}})",
                                 str(a.waiting_requests_per_replica), "AverageValue"),
                         trigger("kv-cache", f"avg(vllm:kv_cache_usage_perc{{{match}}})",
                                 f"{a.kv_cache_usage:g}", "Value"),
                         # requests in flight: grows with the load below saturation (the evidence row's Little's law)
                         *([trigger("running", f"sum(vllm:num_requests_running{{{match}}})", str(running),
                                    "AverageValue")] if running else [])]}}


def _running(svc: Service, pool: PoolFacts) -> int | None:
    ev = evidence(svc, pool.machine.gpu_model)
    return None if ev is None else running_target(svc, ev)


def _trigger_auth(ns: str, cloud: Cloud) -> dict[str, Any]:
    """KEDA reads the metrics with its own workload identity (GCP) or EKS Pod Identity (AWS SigV4 to AMP)."""
    provider = "gcp" if cloud == Cloud.GCP else "aws"
    return {"apiVersion": "keda.sh/v1alpha1", "kind": "TriggerAuthentication", "metadata": _meta(TRIGGER_AUTH, ns),
            "spec": {"podIdentity": {"provider": provider}}}


def _pod_monitoring(svc: Service, ns: str) -> dict[str, Any]:
    return {"apiVersion": "monitoring.googleapis.com/v1", "kind": "PodMonitoring", "metadata": _meta(svc.name, ns),
            "spec": {"selector": {"matchLabels": app_labels(svc)},
                     "endpoints": [{"port": PORT, "path": "/metrics", "interval": f"{GMP_SCRAPE_S}s"}]}}


def inference_pool_values(svc: Service) -> dict[str, Any]:
    """The ``inferencepool`` chart's values: the pool selects the service's serving pods; the endpoint picker runs
    on the system pool with a request sized for it (the chart asks 4 CPUs, a whole default system node)."""
    selector = app_labels(svc) if svc.nodes_per_replica == 1 else \
        {**app_labels(svc), "leaderworkerset.sigs.k8s.io/worker-index": "0"}
    return {"inferencePool": {"targetPorts": [{"number": PORT}], "modelServerType": "vllm",
                              "modelServers": {"matchLabels": selector}},
            "inferenceExtension": {"replicas": 1, "image": {"pullPolicy": "IfNotPresent"},
                                   "resources": {"requests": {"cpu": "1", "memory": "2Gi"},
                                                 "limits": {"memory": "4Gi"}}},
            "provider": {"name": "gke"}}


def _gateway(ns: str) -> dict[str, Any]:
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": _meta(GATEWAY_NAME, ns),
            "spec": {"gatewayClassName": GKE_GATEWAY_CLASS,
                     "listeners": [{"name": "http", "protocol": "HTTP", "port": 80,
                                    "allowedRoutes": {"namespaces": {"from": "Same"}}}]}}


def _route(svc: Service, ns: str) -> dict[str, Any]:
    """``/<service>/v1/...`` on the gateway -> ``/v1/...`` on the InferencePool (the endpoint picker chooses a pod)."""
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": _meta(svc.name, ns),
            "spec": {"parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": GATEWAY_NAME}],
                     "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": f"/{svc.name}"}}],
                                "filters": [{"type": "URLRewrite", "urlRewrite": {
                                    "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}],
                                "backendRefs": [{"group": "inference.networking.k8s.io", "kind": "InferencePool",
                                                 "name": svc.name}],
                                "timeouts": {"request": "300s"}}]}}


def _policies(ns: str, gke: bool, kueue: bool) -> list[dict[str, Any]]:
    """Only the server port (and the endpoint picker's) is reachable from outside the namespace: default-deny
    ingress (Kueue's team-namespace isolation already renders it there), then those ports."""
    ports = [{"protocol": "TCP", "port": PORT}] + ([{"protocol": "TCP", "port": EPP_PORT},
                                                    {"protocol": "TCP", "port": EPP_HEALTH_PORT}] if gke else [])

    def pol(name: str, ingress: list[dict[str, Any]]) -> dict[str, Any]:
        return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": _meta(name, ns),
                "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": ingress}}
    return ([] if kueue else [pol("default-deny-ingress", [])]) + [pol("allow-serving-ports", [{"ports": ports}])]


def _default_queue(ns: str) -> list[dict[str, Any]]:
    """Kueue manages every pod of the serving namespace (it must: the vLLM pods are admitted against serving's
    quota, and Kueue's pod integration only sees namespaces ``managedJobsNamespaceSelector`` selects), and with
    ``manageJobsWithoutQueueName`` a pod naming no queue is gated until it names one: the endpoint picker's pods
    would never start. Kueue gives such pods the namespace's LocalQueue named ``default`` (LocalQueueDefaulting, GA
    and always on since Kueue 0.17: ``pkg/features/kube_features.go``).

    Not serving's ClusterQueue: its only flavors are the GPU pools' TAS flavors, so Kueue implies TAS for every pod
    there, and a picker (CPU and memory only, both excluded from quota) gets no flavor and fails with "no TAS
    flavor assigned" (``stacks/plan/admission.topology_error``). The default queue points at its own ClusterQueue
    with one plain flavor (no topology, no node labels) and 0 GPUs, outside the cohort: a pod that asks no GPU is
    admitted at once, one that asks a GPU without naming serving's queue never is, and it can borrow nothing."""
    flavor = {"apiVersion": KUEUE_API_VERSION, "kind": "ResourceFlavor", "metadata": _meta(DEFAULT_CLUSTER_QUEUE, None),
              "spec": {}}
    cq = {"apiVersion": KUEUE_API_VERSION, "kind": "ClusterQueue", "metadata": _meta(DEFAULT_CLUSTER_QUEUE, None),
          "spec": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                   "resourceGroups": [{"coveredResources": [GPU_RESOURCE], "flavors": [{
                       "name": DEFAULT_CLUSTER_QUEUE, "resources": [{"name": GPU_RESOURCE, "nominalQuota": 0}]}]}]}}
    lq = {"apiVersion": KUEUE_API_VERSION, "kind": "LocalQueue", "metadata": _meta(DEFAULT_LOCAL_QUEUE, ns),
          "spec": {"clusterQueue": DEFAULT_CLUSTER_QUEUE}}
    return [flavor, cq, lq]


def render_serving(serving: ServingSpec, pools: dict[str, PoolFacts], cloud: Cloud, region: str,
                   project: str | None, kueue: bool, cluster: str = "", account: str | None = None) -> ServingObjects:
    """``cluster``: the cluster's name (Google service account IDs are per project, so they carry it); ``account``:
    the AWS account (the AMP workspace's ARN)."""
    ns = serving.namespace
    gke = cloud == Cloud.GCP
    namespace = None if kueue else {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(ns, None, {
        "pod-security.kubernetes.io/enforce": "baseline"})}
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": _meta(SERVING_PRIORITY_CLASS, None),
          "value": serving.priority, "preemptionPolicy": "PreemptLowerPriority", "globalDefault": False,
          "description": "Inference serving: above every training priority; training never preempts it."}
    address = prometheus_address(cloud, project, serving.autoscaling.prometheus_url)
    out = ServingObjects(namespace, pc, _policies(ns, gke, kueue), _gateway(ns) if gke else None, _trigger_auth(ns, cloud),
                         metrics=metrics_access(cloud, project, cluster, region, account, address, ns),
                         default_queue=_default_queue(ns) if kueue else [])
    for svc in serving.services:
        pool = pools[svc.pool]
        workload = _leader_worker_set(svc, pool, ns, kueue) if svc.nodes_per_replica > 1 else \
            _deployment(svc, pool, ns, kueue)
        weights = weights_access(svc, ns, cloud, project, cluster)
        out.services.append(ServiceObjects(
            svc.name, workload, _service(svc, ns), _pdb(svc, ns),
            _scaled_object(svc, serving, ns, address, None if gke else region, _running(svc, pool), cluster),
            _pod_monitoring(svc, ns) if gke else None, inference_pool_values(svc) if gke else None,
            _route(svc, ns) if gke else None, service_account(svc, ns, weights, {**MANAGED, **app_labels(svc)}),
            weights))
    return out
