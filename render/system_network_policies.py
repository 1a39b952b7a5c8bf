"""NetworkPolicies of the system namespaces gpu-cluster installs add-ons into (Kueue, Kubeflow Trainer + JobSet, the
Slinky operator, the NVIDIA device plugin / GPU Operator / DRA driver, the EFA device plugin): default-deny ingress,
the namespace open to itself, then exactly the ports something outside needs. Pure: no Pulumi.

Who calls in, per port (each from the pinned chart's rendered Services and the pods they select; the test
``tests/components/k8s/test_system_network_policies.py`` renders every chart with our values and requires an allow for
every Service port in these namespaces):
- **the API server** to admission webhooks and Kueue's visibility API (an aggregated APIService). Its source
  address differs per cloud (GKE's control-plane range, EKS's cross-account ENIs in the cluster subnets), so these
  allows name the port only: any source may open a TLS connection to the webhook port, nothing else.
- **training pods in the team namespaces** to the Trainer's status server (TrainJob progress).
- **metrics scrapers**: pods in namespaces labelled ``gpu-cluster/scrape-metrics: "true"`` (label your Prometheus
  namespace) to the metrics ports. Tenants do not see other teams' job and GPU metrics.
Health ports (8081) are probed by the kubelet from the node, which NetworkPolicy does not govern on Dataplane V2
or the VPC CNI's policy agent, so they get no allow. Pods on the host network (EFA device plugin) are outside
NetworkPolicy altogether. Egress is not restricted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Sequence

LABELS = {"app.kubernetes.io/part-of": "gpu-cluster"}
SCRAPER_LABEL = "gpu-cluster/scrape-metrics"


class Source(str, Enum):
    API_SERVER = "api-server"
    TEAMS = "teams"
    SCRAPERS = "scrapers"
    NAMESPACE = "namespace"
    """The namespace's own pods (one component calling another, e.g. KEDA's metrics API server and its operator)."""


@dataclass(frozen=True)
class Allow:
    name: str
    selector: dict[str, str]
    """Pod labels (a subset of what the chart's Service selects)."""
    ports: tuple[int, ...]
    """Container ports (NetworkPolicy matches the pod's port, not the Service's)."""
    source: Source
    why: str = ""


@dataclass(frozen=True)
class SystemNamespace:
    namespace: str
    allows: tuple[Allow, ...] = field(default_factory=tuple)


KUEUE = {"app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}
JOBSET = {"app.kubernetes.io/name": "jobset"}
TRAINER = {"app.kubernetes.io/name": "kubeflow-trainer", "app.kubernetes.io/component": "manager"}
SLINKY_WEBHOOK = {"app.kubernetes.io/name": "slurm-operator-webhook"}
SLINKY_OPERATOR = {"app.kubernetes.io/name": "slurm-operator"}
NFD = {"app.kubernetes.io/name": "node-feature-discovery"}
GPU_OPERATOR = {"app": "gpu-operator"}
DCGM_EXPORTER = {"app": "nvidia-dcgm-exporter"}
KEDA_WEBHOOKS = {"app": "keda-admission-webhooks"}
KEDA_OPERATOR = {"app": "keda-operator"}
KEDA_METRICS_API = {"app": "keda-operator-metrics-apiserver"}
LWS = {"app.kubernetes.io/name": "lws", "control-plane": "controller-manager"}

SYSTEM_NAMESPACES = {
    ns.namespace: ns
    for ns in (
        SystemNamespace(
            "kueue-system",
            (
                Allow("webhook-from-api-server", KUEUE, (9443,), Source.API_SERVER, "admission webhooks"),
                Allow("visibility-from-api-server", KUEUE, (8082,), Source.API_SERVER, "visibility API (APIService)"),
                Allow("metrics-from-scrapers", KUEUE, (8443,), Source.SCRAPERS),
            ),
        ),
        SystemNamespace(
            "kubeflow-system",
            (
                Allow(
                    "jobset-webhook-from-api-server", JOBSET, (9443,), Source.API_SERVER, "JobSet admission webhooks"
                ),
                Allow(
                    "trainer-webhook-from-api-server", TRAINER, (9443,), Source.API_SERVER, "Trainer admission webhooks"
                ),
                Allow(
                    "trainer-status-from-teams", TRAINER, (10443,), Source.TEAMS, "TrainJob progress from training pods"
                ),
                Allow("metrics-from-scrapers-jobset", JOBSET, (8443,), Source.SCRAPERS),
                Allow("metrics-from-scrapers-trainer", TRAINER, (8443,), Source.SCRAPERS),
            ),
        ),
        SystemNamespace(
            "slinky",
            (
                Allow("webhook-from-api-server", SLINKY_WEBHOOK, (9443,), Source.API_SERVER, "Slinky CR webhooks"),
                Allow("metrics-from-scrapers", SLINKY_OPERATOR, (8080,), Source.SCRAPERS),
            ),
        ),
        SystemNamespace(
            "gpu-operator",
            (
                Allow("metrics-from-scrapers-operator", GPU_OPERATOR, (8080,), Source.SCRAPERS),
                Allow("metrics-from-scrapers-nfd", NFD, (8080,), Source.SCRAPERS),
                Allow(
                    "metrics-from-scrapers-dcgm",
                    DCGM_EXPORTER,
                    (9400,),
                    Source.SCRAPERS,
                    "the operator creates the DCGM exporter and its Service at run time",
                ),
            ),
        ),
        SystemNamespace("nvidia-device-plugin", (Allow("metrics-from-scrapers-nfd", NFD, (8080,), Source.SCRAPERS),)),
        SystemNamespace("dra-driver-nvidia-gpu"),
        SystemNamespace("aws-efa-device-plugin"),
        SystemNamespace("gpu-cluster-prepull"),  # pre-pull DaemonSets: nothing calls in
        SystemNamespace(
            "keda",
            (  # serving's autoscaler
                Allow("webhook-from-api-server", KEDA_WEBHOOKS, (9443,), Source.API_SERVER, "ScaledObject webhooks"),
                Allow(
                    "metrics-api-from-api-server",
                    KEDA_METRICS_API,
                    (6443,),
                    Source.API_SERVER,
                    "external metrics API (APIService) the HPA reads",
                ),
                Allow("metrics-from-scrapers", KEDA_METRICS_API, (8080,), Source.SCRAPERS),
                Allow(
                    "operator-from-metrics-api",
                    KEDA_OPERATOR,
                    (9666,),
                    Source.NAMESPACE,
                    "the metrics API server reads scaler metrics from the operator (gRPC)",
                ),
            ),
        ),
        SystemNamespace(
            "lws-system",
            (Allow("webhook-from-api-server", LWS, (9443,), Source.API_SERVER, "LeaderWorkerSet webhooks"),),
        ),
    )
}


def _policy(namespace: str, name: str, selector: dict[str, Any], ingress: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": selector, "policyTypes": ["Ingress"]}
    if ingress:
        spec["ingress"] = ingress
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(LABELS)},
        "spec": spec,
    }


def _peers(source: Source, team_namespaces: Sequence[str]) -> list[dict[str, Any]] | None:
    """``None``: any source (the rule names ports only); ``[]``: nobody (the rule is left out)."""
    if source == Source.API_SERVER:
        return None
    if source == Source.NAMESPACE:
        return [{"podSelector": {}}]
    if source == Source.TEAMS:
        return (
            [
                {
                    "namespaceSelector": {
                        "matchExpressions": [
                            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": sorted(team_namespaces)}
                        ]
                    }
                }
            ]
            if team_namespaces
            else []
        )
    return [{"namespaceSelector": {"matchLabels": {SCRAPER_LABEL: "true"}}}]


def system_namespace_policies(namespace: str, team_namespaces: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Default-deny, same-namespace, and the namespace's allows. ``team_namespaces``: where TrainJobs run."""
    ns = SYSTEM_NAMESPACES[namespace]
    out = [
        _policy(namespace, "default-deny-ingress", {}, []),
        _policy(namespace, "allow-same-ns", {}, [{"from": [{"podSelector": {}}]}]),
    ]
    for allow in ns.allows:
        peers = _peers(allow.source, team_namespaces)
        if peers == []:
            continue
        rule: dict[str, Any] = {"ports": [{"protocol": "TCP", "port": p} for p in allow.ports]}
        if peers is not None:
            rule["from"] = peers
        out.append(_policy(namespace, allow.name, {"matchLabels": dict(allow.selector)}, [rule]))
    return out
