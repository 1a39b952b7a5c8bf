"""How serving scales: KEDA's ScaledObject on vLLM's own signals, its TriggerAuthentication, the Prometheus it
queries and (GKE) the PodMonitoring that scrapes vLLM for Managed Service for Prometheus. Pure."""

from __future__ import annotations

from typing import Any

from catalog import Cloud
from stacks.plan.facts import PoolFacts
from render.serving_labels import app_labels, meta
from stacks.plan.serving import PORT, evidence, served_target
from stacks.plan.serving_metrics import GMP_SCRAPE_S, scrape_interval_s
from stacks.spec.serving import Service, ServingSpec

TRIGGER_AUTH = "prometheus"


def prometheus_address(cloud: Cloud, project: str | None, override: str | None) -> str | None:
    if override:
        return override
    if cloud == Cloud.GCP and project:  # Managed Service for Prometheus' query API (PromQL over HTTP)
        return f"https://monitoring.googleapis.com/v1/projects/{project}/location/global/prometheus"
    return None


def scaled_object(
    svc: Service,
    serving: ServingSpec,
    ns: str,
    address: str | None,
    aws_region: str | None,
    served: float | None,
    cluster: str = "",
    cloud: Cloud = Cloud.GCP,
) -> dict[str, Any]:
    a = serving.autoscaling
    kind = (
        ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet") if svc.nodes_per_replica > 1 else ("apps/v1", "Deployment")
    )
    # GMP spans the project and an AMP workspace may be shared: only this cluster's series (GMP labels them with the
    # cluster's name, the AWS managed collector's configuration adds the same label)
    # a rate needs several samples in its window: 4 scrapes (1 min on GKE, 2 min on EKS's 30 s minimum)
    window = f"{max(60, 4 * scrape_interval_s(cloud)) // 60}m"
    match = (f'cluster="{cluster}",' if cluster else "") + f'namespace="{ns}",model_name="{svc.name}"'

    def trigger(name: str, query: str, threshold: str, metric_type: str) -> dict[str, Any]:
        t: dict[str, Any] = {
            "type": "prometheus",
            "name": name,
            "metricType": metric_type,
            "metadata": {"serverAddress": address or "", "query": query, "threshold": threshold},
            "authenticationRef": {"name": TRIGGER_AUTH},
        }
        if aws_region:
            t["metadata"]["awsRegion"] = aws_region  # SigV4 to Amazon Managed Service for Prometheus
        return t

    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": meta(svc.name, ns),
        "spec": {
            "scaleTargetRef": {"apiVersion": kind[0], "kind": kind[1], "name": svc.name},
            "minReplicaCount": svc.replicas.min,
            "maxReplicaCount": svc.replicas.max,
            "pollingInterval": a.polling_interval_seconds,
            "cooldownPeriod": a.cooldown_seconds,
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "behavior": {"scaleDown": {"stabilizationWindowSeconds": a.cooldown_seconds}}
                }
            },
            "triggers": [
                # requests waiting summed over replicas, divided by replicas by the HPA (AverageValue)
                trigger(
                    "waiting",
                    f"sum(vllm:num_requests_waiting{{{match}}})",
                    str(a.waiting_requests_per_replica),
                    "AverageValue",
                ),
                trigger("kv-cache", f"avg(vllm:kv_cache_usage_perc{{{match}}})", f"{a.kv_cache_usage:g}", "Value"),
                # completed requests/s: grows with the load below saturation, and unlike requests in flight has no
                # time-in-server in it (that grows with the batch); target 0.8 × the evidence row's rate
                *(
                    [
                        trigger(
                            "served",
                            f"sum(rate(vllm:request_success_total{{{match}}}[{window}]))",
                            f"{served:g}",
                            "AverageValue",
                        )
                    ]
                    if served
                    else []
                ),
            ],
        },
    }


def served_per_replica(svc: Service, pool: PoolFacts) -> float | None:
    ev = evidence(svc, pool.machine.gpu_model)
    return None if ev is None else served_target(svc, ev)


def trigger_auth(ns: str, cloud: Cloud) -> dict[str, Any]:
    """KEDA reads the metrics with its own workload identity (GCP) or EKS Pod Identity (AWS SigV4 to AMP)."""
    provider = "gcp" if cloud == Cloud.GCP else "aws"
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "TriggerAuthentication",
        "metadata": meta(TRIGGER_AUTH, ns),
        "spec": {"podIdentity": {"provider": provider}},
    }


def pod_monitoring(svc: Service, ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": meta(svc.name, ns),
        "spec": {
            "selector": {"matchLabels": app_labels(svc)},
            "endpoints": [{"port": PORT, "path": "/metrics", "interval": f"{GMP_SCRAPE_S}s"}],
        },
    }
