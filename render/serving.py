"""Serving spec + pool facts -> the Kubernetes objects of each inference service (plain dicts, as applied). Pure.

Per service: the vLLM server as a Deployment (one node per replica) or a LeaderWorkerSet (a group of nodes per
replica), a ClusterIP Service, a PodDisruptionBudget, and a KEDA ScaledObject that scales on vLLM's own signals
(``vllm:num_requests_waiting`` per replica and ``vllm:kv_cache_usage_perc``). On GKE also a PodMonitoring (Managed
Service for Prometheus scrapes vLLM), the values of the ``inferencepool`` chart (InferencePool + endpoint picker) and an
HTTPRoute from the stack's inference Gateway to the pool. Stack-wide: the PriorityClass above training and the
namespace's NetworkPolicies. With Kueue, pods carry the serving LocalQueue and priority labels so every replica is
admitted against serving's own quota (``stacks/plan/serving.py``).

This module assembles; the pods live in ``serving_workload``, scaling in ``serving_autoscaling``, the Inference
Gateway in ``serving_gateway``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from catalog import Cloud
from stacks.plan.facts import PoolFacts
from render.kueue import API_VERSION as KUEUE_API_VERSION, GPU_RESOURCE
from render.serving_autoscaling import (
    pod_monitoring,
    prometheus_address,
    scaled_object,
    served_per_replica,
    trigger_auth,
)
from render.serving_gateway import EPP_HEALTH_PORT, EPP_PORT, gateway, inference_pool_values, route
from render.serving_identity import MetricsAccess, WeightsAccess, metrics_access, service_account, weights_access
from render.serving_labels import MANAGED, app_labels, meta
from render.serving_workload import deployment, leader_worker_set, pdb, service
from stacks.plan.serving import PORT, SERVING_PRIORITY_CLASS
from stacks.plan.kueue_pods import SERVING_DEFAULT_CLUSTER_QUEUE as DEFAULT_CLUSTER_QUEUE
from stacks.spec.serving import ServingSpec

DEFAULT_LOCAL_QUEUE = "default"
"""Kueue's defaulting name: a pod without a queue label in a namespace with a LocalQueue of this name is its."""


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
        return [
            o
            for o in (
                self.service_account,
                self.workload,
                self.service,
                self.pdb,
                self.scaled_object,
                self.pod_monitoring,
                self.route,
            )
            if o is not None
        ]


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
        head = [
            o for o in (self.namespace, self.priority_class, self.trigger_auth, *self.default_queue) if o is not None
        ]
        return [
            *head,
            *self.policies,
            *([self.gateway] if self.gateway else []),
            *(o for s in self.services for o in s.objects()),
        ]


def _policies(ns: str, gke: bool, kueue: bool) -> list[dict[str, Any]]:
    """Only the server port (and the endpoint picker's) is reachable from outside the namespace: default-deny
    ingress (Kueue's team-namespace isolation already renders it there), then those ports."""
    ports = [{"protocol": "TCP", "port": PORT}] + (
        [{"protocol": "TCP", "port": EPP_PORT}, {"protocol": "TCP", "port": EPP_HEALTH_PORT}] if gke else []
    )

    def pol(name: str, ingress: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta(name, ns),
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": ingress},
        }

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
    flavor = {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": meta(DEFAULT_CLUSTER_QUEUE, None),
        "spec": {},
    }
    cq = {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "ClusterQueue",
        "metadata": meta(DEFAULT_CLUSTER_QUEUE, None),
        "spec": {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
            "resourceGroups": [
                {
                    "coveredResources": [GPU_RESOURCE],
                    "flavors": [
                        {"name": DEFAULT_CLUSTER_QUEUE, "resources": [{"name": GPU_RESOURCE, "nominalQuota": 0}]}
                    ],
                }
            ],
        },
    }
    lq = {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "LocalQueue",
        "metadata": meta(DEFAULT_LOCAL_QUEUE, ns),
        "spec": {"clusterQueue": DEFAULT_CLUSTER_QUEUE},
    }
    return [flavor, cq, lq]


def render_serving(
    serving: ServingSpec,
    pools: dict[str, PoolFacts],
    cloud: Cloud,
    region: str,
    project: str | None,
    kueue: bool,
    cluster: str = "",
    account: str | None = None,
) -> ServingObjects:
    """``cluster``: the cluster's name (Google service account IDs are per project, so they carry it); ``account``:
    the AWS account (the AMP workspace's ARN)."""
    ns = serving.namespace
    gke = cloud == Cloud.GCP
    namespace = (
        None
        if kueue
        else {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": meta(ns, None, {"pod-security.kubernetes.io/enforce": "baseline"}),
        }
    )
    pc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": meta(SERVING_PRIORITY_CLASS, None),
        "value": serving.priority,
        "preemptionPolicy": "PreemptLowerPriority",
        "globalDefault": False,
        "description": "Inference serving: above every training priority; training never preempts it.",
    }
    address = prometheus_address(cloud, project, serving.autoscaling.prometheus_url)
    out = ServingObjects(
        namespace,
        pc,
        _policies(ns, gke, kueue),
        gateway(ns) if gke else None,
        trigger_auth(ns, cloud),
        metrics=metrics_access(cloud, project, cluster, region, account, address, ns),
        default_queue=_default_queue(ns) if kueue else [],
    )
    for svc in serving.services:
        pool = pools[svc.pool]
        workload = (
            leader_worker_set(svc, pool, ns, kueue) if svc.nodes_per_replica > 1 else deployment(svc, pool, ns, kueue)
        )
        weights = weights_access(svc, ns, cloud, project, cluster)
        out.services.append(
            ServiceObjects(
                svc.name,
                workload,
                service(svc, ns),
                pdb(svc, ns),
                scaled_object(
                    svc,
                    serving,
                    ns,
                    address,
                    None if gke else region,
                    served_per_replica(svc, pool),
                    cluster,
                    cloud,
                ),
                pod_monitoring(svc, ns) if gke else None,
                inference_pool_values(svc) if gke else None,
                route(svc, ns) if gke else None,
                service_account(svc, ns, weights, {**MANAGED, **app_labels(svc)}),
                weights,
            )
        )
    return out
