"""The vLLM server of one inference service: its Deployment (one node per replica) or LeaderWorkerSet (a group of
nodes per replica), ClusterIP Service and PodDisruptionBudget. Pure."""

from __future__ import annotations

from typing import Any

from stacks.plan.facts import PoolFacts
from render.serving_identity import GCS_FUSE_DRIVER, WEIGHTS_MOUNT, pod_meta, service_account_name
from render.serving_labels import app_labels, meta
from stacks.plan.serving import (
    PORT,
    SERVING_PRIORITY_CLASS,
    SERVING_QUEUE,
    bucket_path,
    concurrency,
    image,
    kv_precision,
    model_card,
)
from stacks.plan.serving_load import STARTUP_PROBE_PERIOD_S, startup_probe_failures
from stacks.plan.serving_resources import vllm_resources
from stacks.spec.serving import Service

MULTI_NODE_SCRIPT = "/vllm-workspace/examples/online_serving/multi-node-serving.sh"
"""vLLM's helper that starts a Ray head (waiting for ``--ray_cluster_size`` nodes) or joins one
(vllm-project/vllm examples/online_serving/multi-node-serving.sh; https://docs.vllm.ai/en/stable/examples/online_serving/multi-node-serving/)."""
DRAIN_SECONDS = 60
"""Grace period on scale-down: requests in flight finish (a decode of 200 tokens at 100 ms/token takes 20 s)."""


def _vllm_args(svc: Service, pool: PoolFacts, served_model: str) -> list[str]:
    tp = svc.gpus_per_replica // svc.nodes_per_replica
    args = [
        "vllm",
        "serve",
        served_model,
        "--port",
        str(PORT),
        "--served-model-name",
        svc.name,
        "--tensor-parallel-size",
        str(tp),
        "--max-model-len",
        str(svc.max_context_tokens),
        "--max-num-seqs",
        str(concurrency(svc, pool.machine.gpu_model)),  # what a replica holds at its measured rate
        "--gpu-memory-utilization",
        f"{svc.gpu_memory_utilization:g}",
    ]
    if svc.nodes_per_replica > 1:
        args += ["--pipeline-parallel-size", str(svc.nodes_per_replica), "--distributed-executor-backend", "ray"]
    if kv_precision(svc).value == "fp8":
        args += ["--kv-cache-dtype", "fp8"]
    if bucket_path(svc.model_uri) is not None:
        # concurrent safetensors reads to GPU memory: from s3:// directly, from the FUSE mount on GKE
        args += ["--load-format", "runai_streamer"]
    return args


def _resources(svc: Service, pool: PoolFacts, gpus: int) -> dict[str, Any]:
    """GPUs, and the pod's share of the node's CPU and memory: without them a vLLM pod is BestEffort beside training
    (lowest CPU weight, evicted first under memory pressure). Memory limit = request (never over-committed); no CPU
    limit (CFS throttling would stall the engine loop while cores are idle)."""
    requests: dict[str, Any] = {"nvidia.com/gpu": gpus}
    limits: dict[str, Any] = {"nvidia.com/gpu": gpus}
    share = vllm_resources(svc, pool.machine)
    if share is not None:
        requests |= {"cpu": f"{share.cpu:g}", "memory": f"{share.memory_gib}Gi"}
        limits["memory"] = f"{share.memory_gib}Gi"
    return {"limits": limits, "requests": requests}


def _container(svc: Service, pool: PoolFacts, command: list[str], gpus: int, serving: bool) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": "vllm",
        "image": image(svc),
        "command": ["/bin/sh", "-c", " ".join(command)],
        "resources": _resources(svc, pool, gpus),
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],  # NCCL and the engine's workers share memory
        "securityContext": {"allowPrivilegeEscalation": False},
    }
    if serving:
        c["ports"] = [{"name": "http", "containerPort": PORT, "protocol": "TCP"}]
        c["readinessProbe"] = {"httpGet": {"path": "/health", "port": PORT}, "periodSeconds": 5}
        # weights load for minutes on a cold node; longer when every rank streams a large checkpoint
        c["startupProbe"] = {
            "httpGet": {"path": "/health", "port": PORT},
            "periodSeconds": STARTUP_PROBE_PERIOD_S,
            "failureThreshold": startup_probe_failures(model_card(svc), svc),
        }
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
        volumes.append(
            {
                "name": "weights",
                "csi": {
                    "driver": GCS_FUSE_DRIVER,
                    "readOnly": True,
                    "volumeAttributes": {"bucketName": where.bucket, "mountOptions": options},
                },
            }
        )
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


def deployment(svc: Service, pool: PoolFacts, ns: str, kueue: bool) -> dict[str, Any]:
    labels = _pod_labels(svc, kueue)
    container = _container(svc, pool, _vllm_args(svc, pool, _served_model(svc)), svc.gpus_per_replica, True)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(svc.name, ns, labels),
        # no replicas: the ScaledObject's HPA owns them (KEDA holds minReplicaCount); a value here would conflict
        # with the HPA under server-side apply, or reset a scaled-out service to its minimum on every update
        "spec": {
            "selector": {"matchLabels": app_labels(svc)},
            # one replica at a time: a surge replica needs GPUs that may be lent to training
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
            "template": {"metadata": pod_meta(svc, labels), "spec": _pod_spec(svc, pool, container)},
        },
    }


def leader_worker_set(svc: Service, pool: PoolFacts, ns: str, kueue: bool) -> dict[str, Any]:
    labels = _pod_labels(svc, kueue)
    per_node = svc.gpus_per_replica // svc.nodes_per_replica
    leader_cmd = [
        "bash",
        MULTI_NODE_SCRIPT,
        "leader",
        "--ray_cluster_size=$(LWS_GROUP_SIZE);",
        *_vllm_args(svc, pool, _served_model(svc)),
    ]
    worker_cmd = ["bash", MULTI_NODE_SCRIPT, "worker", "--ray_address=$(LWS_LEADER_ADDRESS)"]
    leader = {
        "metadata": pod_meta(svc, labels),
        "spec": _pod_spec(svc, pool, _container(svc, pool, leader_cmd, per_node, True)),
    }
    worker = {
        "metadata": pod_meta(svc, labels),
        "spec": _pod_spec(svc, pool, _container(svc, pool, worker_cmd, per_node, False)),
    }
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": meta(svc.name, ns, labels),
        "spec": {  # no replicas: the ScaledObject's HPA owns them, as for the Deployment
            "startupPolicy": "LeaderCreated",
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0},
            },
            "leaderWorkerTemplate": {
                "size": svc.nodes_per_replica,
                # a worker lost mid-decode leaves the Ray group broken: restart the whole group, but only
                # once every pod has started (slow image pulls would otherwise loop the group)
                "restartPolicy": "RecreateGroupAfterStart",
                "leaderTemplate": leader,
                "workerTemplate": worker,
            },
        },
    }


def service(svc: Service, ns: str) -> dict[str, Any]:
    selector = app_labels(svc)
    if svc.nodes_per_replica > 1:
        selector = {**selector, "leaderworkerset.sigs.k8s.io/worker-index": "0"}  # only leaders serve HTTP
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(svc.name, ns, app_labels(svc)),
        "spec": {
            "type": "ClusterIP",
            "selector": selector,
            "ports": [{"name": "http", "port": PORT, "targetPort": PORT, "protocol": "TCP"}],
        },
    }


def pdb(svc: Service, ns: str) -> dict[str, Any]:
    """Voluntary disruptions (node drains, upgrades) never take serving below its minimum replicas."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta(svc.name, ns),
        "spec": {
            "minAvailable": svc.replicas.min * svc.nodes_per_replica,
            "selector": {"matchLabels": app_labels(svc)},
        },
    }
