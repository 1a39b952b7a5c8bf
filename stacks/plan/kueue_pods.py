"""Which LocalQueue Kueue v0.19.2 puts a plain pod in, or whether it leaves it alone or gates it for good: the part of
its pod integration (``pkg/controller/jobs/pod/pod_webhook.go``, ``pkg/controller/jobframework``) that decides a
pod's fate before any quota is looked at. Pure: reads the manager Configuration and LocalQueues as dicts.

- Pod-based integrations only see namespaces ``managedJobsNamespaceSelector`` selects; elsewhere a pod is never
  Kueue's, even with a queue label (the configuration API's "strong exemption" for pod-based integrations).
- A pod naming no queue gets the namespace's LocalQueue named ``default`` when there is one (LocalQueueDefaulting,
  GA and locked on since 0.17).
- Otherwise, with ``manageJobsWithoutQueueName``, it is gated (``kueue.x-k8s.io/admission``) and no queue will
  ever admit it; without it, Kueue leaves it alone.

Not ported: pod groups, owner checks (pods of a Kueue-managed owner are the owner's), the webhook's failure policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
DEFAULT_QUEUE = "default"
SERVING_DEFAULT_CLUSTER_QUEUE = "serving-default"
"""The ClusterQueue (and plain ResourceFlavor) the serving namespace's ``default`` LocalQueue points at: 0 GPUs, no
topology, so pods that name no queue (the endpoint pickers) are admitted without TAS and take no GPU."""
NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class PodFate:
    managed: bool
    local_queue: str | None
    """The LocalQueue the pod's workload is queued in; None for an unmanaged pod or one gated for good."""

    @property
    def gated_forever(self) -> bool:
        return self.managed and self.local_queue is None


def _selects(selector: Mapping[str, Any] | None, namespace: str, labels: Mapping[str, str]) -> bool:
    if selector is None:
        return True
    ns_labels = {NAME_LABEL: namespace, **labels}
    if any(ns_labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        value, values, op = ns_labels.get(e["key"]), e.get("values") or [], e["operator"]
        if (
            (op == "In" and value not in values)
            or (op == "NotIn" and value in values)
            or (op == "Exists" and value is None)
            or (op == "DoesNotExist" and value is not None)
        ):
            return False
    return True


def pod_fate(
    config: Mapping[str, Any],
    namespace: str,
    pod_labels: Mapping[str, str],
    local_queues: Sequence[Mapping[str, Any]],
    namespace_labels: Mapping[str, str] | None = None,
) -> PodFate:
    if "pod" not in ((config.get("integrations") or {}).get("frameworks") or []) or not _selects(
        config.get("managedJobsNamespaceSelector"), namespace, namespace_labels or {}
    ):
        return PodFate(False, None)
    named = pod_labels.get(QUEUE_LABEL)
    here = {q["metadata"]["name"] for q in local_queues if q["metadata"].get("namespace") == namespace}
    if named:
        return PodFate(True, named if named in here else None)
    if DEFAULT_QUEUE in here:
        return PodFate(True, DEFAULT_QUEUE)
    return PodFate(bool(config.get("manageJobsWithoutQueueName")), None)


LWS_INTEGRATION = "leaderworkerset.x-k8s.io/leaderworkerset"


@dataclass(frozen=True)
class WorkloadPodSet:
    name: str
    count: int
    template: Mapping[str, Any]


def workloads_of(config: Mapping[str, Any], obj: Mapping[str, Any]) -> list[list[WorkloadPodSet]]:
    """The Kueue workloads one replica (a Deployment's pod, or a LeaderWorkerSet group) becomes, each a list of
    PodSets. With the LeaderWorkerSet integration enabled a group is one workload: PodSets ``leader`` (1 pod) and
    ``worker`` (size - 1), or ``main`` (size) without a leader template (``leaderworkerset_reconciler.go``
    ``podSets``). Otherwise each pod is a single-pod workload of its own (the pod integration; the owner is a kind
    Kueue does not manage), so a group's pods are admitted one by one, with no gang."""
    frameworks = (config.get("integrations") or {}).get("frameworks") or []
    if obj["kind"] == "LeaderWorkerSet":
        lwt = obj["spec"]["leaderWorkerTemplate"]
        size, leader, worker = int(lwt.get("size", 1)), lwt.get("leaderTemplate"), lwt["workerTemplate"]
        if LWS_INTEGRATION in frameworks:
            if leader is None:
                return [[WorkloadPodSet("main", size, worker)]]
            return [[WorkloadPodSet("leader", 1, leader), WorkloadPodSet("worker", size - 1, worker)]]
        pods = [leader] if leader is not None else [worker]
        pods += [worker] * (size - len(pods))
        return [[WorkloadPodSet("main", 1, t)] for t in pods]
    return [[WorkloadPodSet("main", 1, obj["spec"]["template"])]]
