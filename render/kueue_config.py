"""Scheduling spec -> the Kueue manager Configuration and the Helm values of the pinned Kueue chart. Pure: no Pulumi.

The chart embeds the whole manager configuration as one YAML string (``managerConfig.controllerManagerConfigYaml``),
so the string rendered here replaces the chart's default: it keeps the chart's ports, probes and leader-election lock
and adds gang admission (``waitForPodsReady``), fair sharing and the integrations gpu-cluster uses.
Field names follow ``config.kueue.x-k8s.io/v1beta2`` (Kueue 0.19), where a present ``waitForPodsReady`` or
``fairSharing`` block turns the feature on (v1beta1's ``enable`` flags are gone).
"""

from __future__ import annotations

from typing import Any, Sequence

import yaml

from render.compute_domain import CHANNEL_DEVICE_CLASS, KUEUE_RESOURCE as CHANNEL_RESOURCE
from render.fabric_claim import KUEUE_RESOURCE
from stacks.spec.scheduling import SchedulingSpec

CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"
INTEGRATIONS = ("batch/job", "jobset.x-k8s.io/jobset", "trainer.kubeflow.org/trainjob", "pod")
"""Kubeflow Trainer's TrainJob (which runs as a JobSet), JobSet itself, plain Jobs, and bare pods (in the team
namespaces only, see ``managedJobsNamespaceSelector``): with ``manageJobsWithoutQueueName`` a tenant's Job, JobSet
or pod without a queue name waits instead of running outside quota. Pods a managed job owns are its job's."""
SERVING_INTEGRATIONS = ("deployment", "leaderworkerset.x-k8s.io/leaderworkerset")
"""Added on stacks that serve (Kueue v0.19.2 ``FrameworkName``s, ``pkg/controller/jobs/deployment``,
``.../leaderworkerset``): without them a vLLM pod's owner is a kind Kueue knows but does not manage, so every pod,
leader and worker alike, is its own single-pod workload (``FindAncestorJobManagedByKueue``) and a multi-node replica
is admitted pod by pod, with no gang. With them a LeaderWorkerSet group is one workload (a ``leader`` and a
``worker`` PodSet) and a Deployment's pods are admitted as serving workloads. Both build on the ``pod`` integration.
The LeaderWorkerSet CRD arrives with serving's chart after Kueue starts; Kueue defers that controller until the API
exists (``pkg/controller/jobframework/setup.go``, "deferring setting up controller")."""
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
IGNORED_RESOURCES = ("cpu", "memory", "ephemeral-storage", "hugepages-", "vpc.amazonaws.com/efa")
"""Quota is kept in GPUs only; without this Kueue refuses any job that requests a resource no ClusterQueue covers.
EFA pools' jobs also request ``vpc.amazonaws.com/efa`` and 2 MiB huge pages (render/fabric_pod.py): per-node
devices the GPU quota already bounds."""
FAIR_SHARING_STRATEGIES = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
REQUEUE_BACKOFF_BASE_SECONDS = 60
REQUEUE_BACKOFF_MAX_SECONDS = 3600


def base_config(team_namespaces: Sequence[str]) -> dict[str, Any]:
    """What every Kueue of gpu-cluster runs with (the chart's ports, probes and lock; our integrations and quota);
    ``team_namespaces``: where every job is Kueue's (the queues' namespaces)."""
    return {
        "apiVersion": CONFIG_API_VERSION,
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "clientConnection": {"qps": 300, "burst": 500},
        "integrations": {"frameworks": list(INTEGRATIONS)},
        # quota cannot be bypassed: in the team namespaces every job is Kueue's, queue name or not (a job without
        # one is suspended until it names a queue); elsewhere (system namespaces) Kueue leaves pods alone
        "manageJobsWithoutQueueName": True,
        "managedJobsNamespaceSelector": {
            "matchExpressions": [
                {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": list(dict.fromkeys(team_namespaces))}
            ]
        },
        "resources": {"excludeResourcePrefixes": list(IGNORED_RESOURCES)},
    }


def manager_config(
    spec: SchedulingSpec,
    device_classes: Sequence[str] = (),
    pods_ready_timeout_s: int | None = None,
    serving: bool = False,
) -> dict[str, Any]:
    """``device_classes``: the DRA DeviceClasses jobs claim (GKE-managed fabric pools' RDMA NICs), which Kueue must
    map to a quota resource or it holds the jobs as inadmissible (``render/fabric_claim.py``).
    ``pods_ready_timeout_s``: the plan's timeout (``KueuePlan.pods_ready_timeout``, raised for rack-scale pools);
    None: ``scheduling.gang.timeoutSeconds``. The longer of the two wins: serving raises ``spec``'s own timeout to its
    pods' ready budget (``with_serving_queue``), and one timeout serves every workload."""
    config = base_config([q.namespace or q.name for q in spec.queues])
    if serving:
        config["integrations"]["frameworks"] += list(SERVING_INTEGRATIONS)
    nics = [c for c in device_classes if c != CHANNEL_DEVICE_CLASS]
    mappings = [{"name": KUEUE_RESOURCE, "deviceClassNames": nics}] if nics else []
    if CHANNEL_DEVICE_CLASS in device_classes:  # IMEX channels of ComputeDomains (render/compute_domain.py)
        mappings.append({"name": CHANNEL_RESOURCE, "deviceClassNames": [CHANNEL_DEVICE_CLASS]})
    if mappings:
        config["resources"]["deviceClassMappings"] = mappings
    if spec.gang.enabled:
        # All-or-nothing: an admitted gang whose pods are not all ready in time is evicted and requeued with backoff,
        # so two half-started gangs cannot hold each other's GPUs forever.
        config["waitForPodsReady"] = {
            "timeout": f"{max(pods_ready_timeout_s or 0, spec.gang.timeout_seconds)}s",
            "blockAdmission": False,
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffBaseSeconds": REQUEUE_BACKOFF_BASE_SECONDS,
                "backoffMaxSeconds": REQUEUE_BACKOFF_MAX_SECONDS,
            },
        }
        if spec.gang.recovery_timeout_seconds is not None:  # Kueue defaults it to the timeout
            config["waitForPodsReady"]["recoveryTimeout"] = f"{spec.gang.recovery_timeout_seconds}s"
    if spec.cohort and spec.fair_sharing:
        config["fairSharing"] = {"preemptionStrategies": list(FAIR_SHARING_STRATEGIES)}
    return config


def manager_config_yaml(
    spec: SchedulingSpec,
    device_classes: Sequence[str] = (),
    pods_ready_timeout_s: int | None = None,
    serving: bool = False,
) -> str:
    return yaml.safe_dump(manager_config(spec, device_classes, pods_ready_timeout_s, serving), sort_keys=False)


def kueue_values(
    spec: SchedulingSpec,
    device_classes: Sequence[str] = (),
    pods_ready_timeout_s: int | None = None,
    serving: bool = False,
) -> dict[str, Any]:
    """Helm values for the Kueue chart: two controller replicas behind a PodDisruptionBudget, and our configuration.

    Two replicas share one leader-election lock; the standby keeps Kueue's admission webhooks answering while the
    leader restarts (a webhook that is down blocks every job submission).
    """
    return {
        "controllerManager": {"replicas": 2, "podDisruptionBudget": {"enabled": True, "minAvailable": 1}},
        "managerConfig": {
            "controllerManagerConfigYaml": manager_config_yaml(spec, device_classes, pods_ready_timeout_s, serving)
        },
    }


def fleet_manager_values(multikueue: dict[str, Any], team_namespaces: Sequence[str]) -> dict[str, Any]:
    """Helm values for a fleet manager's Kueue: the same integrations as the workers' (MultiKueue dispatches only
    kinds the manager's Kueue manages) and the ``multiKueue`` block (``scheduling/fleet_manager.py``). No gang or
    fair-sharing settings: the manager runs no pods, each worker's Kueue applies its own."""
    config = {**base_config(team_namespaces), "multiKueue": multikueue}
    return {
        "controllerManager": {"replicas": 2, "podDisruptionBudget": {"enabled": True, "minAvailable": 1}},
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config, sort_keys=False)},
    }
