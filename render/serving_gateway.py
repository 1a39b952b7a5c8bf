"""GKE Inference Gateway for serving: the stack's Gateway, each service's HTTPRoute and the values of its
``inferencepool`` chart (InferencePool + endpoint picker). Pure."""

from __future__ import annotations

from typing import Any

from render.serving_labels import app_labels, meta
from stacks.plan.serving import PORT
from stacks.spec.serving import Service

EPP_PORT = 9002
"""The endpoint picker's ext-proc port (inferencepool chart v1.5.0 values ``inferenceExtension.extProcPort``)."""
EPP_HEALTH_PORT = 9003
GATEWAY_NAME = "inference-gateway"
GKE_GATEWAY_CLASS = "gke-l7-rilb"
"""GKE's regional internal Application Load Balancer class, which GKE Inference Gateway supports for InferencePools."""


def inference_pool_values(svc: Service) -> dict[str, Any]:
    """The ``inferencepool`` chart's values: the pool selects the service's serving pods; the endpoint picker runs
    on the system pool with a request sized for it (the chart asks 4 CPUs, a whole default system node)."""
    selector = (
        app_labels(svc)
        if svc.nodes_per_replica == 1
        else {**app_labels(svc), "leaderworkerset.sigs.k8s.io/worker-index": "0"}
    )
    return {
        "inferencePool": {
            "targetPorts": [{"number": PORT}],
            "modelServerType": "vllm",
            "modelServers": {"matchLabels": selector},
        },
        "inferenceExtension": {
            "replicas": 1,
            "image": {"pullPolicy": "IfNotPresent"},
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "4Gi"}},
        },
        "provider": {"name": "gke"},
    }


def gateway(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": meta(GATEWAY_NAME, ns),
        "spec": {
            "gatewayClassName": GKE_GATEWAY_CLASS,
            "listeners": [
                {"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "Same"}}}
            ],
        },
    }


def route(svc: Service, ns: str) -> dict[str, Any]:
    """``/<service>/v1/...`` on the gateway -> ``/v1/...`` on the InferencePool (the endpoint picker chooses a pod)."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": meta(svc.name, ns),
        "spec": {
            "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": GATEWAY_NAME}],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": f"/{svc.name}"}}],
                    "filters": [
                        {
                            "type": "URLRewrite",
                            "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
                        }
                    ],
                    "backendRefs": [
                        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": svc.name}
                    ],
                    "timeouts": {"request": "300s"},
                }
            ],
        },
    }
