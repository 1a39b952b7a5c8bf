"""The manager side of a fleet: Kueue objects for MultiKueue and the ``multiKueue`` block of Kueue's configuration.
Pure: rendered from the fleet spec (the worker kubeconfigs arrive later, as Secrets, through StackReferences).

Objects (``kueue.x-k8s.io/v1beta2``, Kueue 0.19): per worker a ``MultiKueueCluster`` whose kubeconfig is the Secret
``<worker>-kubeconfig`` (key ``kubeconfig``) in ``kueue-system``; one ``MultiKueueConfig`` listing them in spec order
(the Incremental dispatcher's order); an ``AdmissionCheck`` with ``controllerName: kueue.x-k8s.io/multikueue``; a
``ResourceFlavor`` per GPU model (node label ``gpu-cluster/fleet-gpu``), and per fleet queue a ClusterQueue carrying
the check and a LocalQueue in the queue's namespace.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from render.fleet import FLEET_PART_OF
from stacks.spec.fleet import FLEET_GPU_LABEL, gpu_slug
from render.kueue import API_VERSION, GPU_RESOURCE, TEAM_NAMESPACE_PSS
from stacks.plan.fleet import cohort_limits
from stacks.spec.fleet import Dispatcher, Fleet, FleetQueue

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
MULTIKUEUE_CONFIG_NAME = "fleet"
ADMISSION_CHECK_NAME = "fleet-multikueue"
KUBECONFIG_KEY = "kubeconfig"
MANAGER_COHORT = "fleet"
"""The cohort of the manager's ClusterQueues: a worker queue may borrow what its sibling lends there, so the manager
must let the fleet queue dispatch past its nominal quota too, or the lent GPUs are never reached."""
"""The Secret key MultiKueue reads a worker's kubeconfig from."""
DISPATCHERS = {
    Dispatcher.ALL_AT_ONCE: "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
    Dispatcher.INCREMENTAL: "kueue.x-k8s.io/multikueue-dispatcher-incremental",
}
MANAGER_FACTS_ANNOTATION = "gpu-cluster/manager-facts"
"""On the MultiKueueConfig: the manager's own facts as JSON (cluster, cloud, region, Kueue version, integrations,
egress CIDRs), for the same rules."""
WORKER_FACTS_ANNOTATION = "gpu-cluster/worker-facts"
"""On each MultiKueueCluster: the worker's exported fleet facts as JSON (queues, GPUs, Kueue version, endpoint), so
the policy pack's fleet rules can read them from a concrete resource."""


def kubeconfig_secret_name(worker: str) -> str:
    return f"{worker}-kubeconfig"


def flavor_name(slug: str) -> str:
    return f"fleet-{slug}"


@dataclass
class ManagerObjects:
    namespaces: list[dict[str, Any]] = field(default_factory=list)
    clusters: list[dict[str, Any]] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    admission_check: dict[str, Any] = field(default_factory=dict)
    flavors: list[dict[str, Any]] = field(default_factory=list)
    cluster_queues: list[dict[str, Any]] = field(default_factory=list)
    local_queues: list[dict[str, Any]] = field(default_factory=list)
    priority_classes: list[dict[str, Any]] = field(default_factory=list)

    def custom_resources(self) -> list[dict[str, Any]]:
        """In reference order: clusters before the config, the config before the check, flavors and the check before
        the queues."""
        return [
            *self.clusters,
            self.config,
            self.admission_check,
            *self.flavors,
            *self.priority_classes,
            *self.cluster_queues,
            *self.local_queues,
        ]


def _obj(kind: str, name: str, namespace: str | None = None, **body: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(FLEET_PART_OF)}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": meta, **body}


def queue_namespace(queue: FleetQueue) -> str:
    return queue.namespace or queue.name


def render_manager(fleet: Fleet, manager_facts: dict[str, Any] | None = None) -> ManagerObjects:
    """``manager_facts``: annotated on the MultiKueueConfig as JSON (``MANAGER_FACTS_ANNOTATION``)."""
    out = ManagerObjects()
    out.clusters = [
        _obj(
            "MultiKueueCluster",
            w.name,
            spec={
                "clusterSource": {"kubeConfig": {"locationType": "Secret", "location": kubeconfig_secret_name(w.name)}}
            },
        )
        for w in fleet.workers
    ]
    out.config = _obj("MultiKueueConfig", MULTIKUEUE_CONFIG_NAME, spec={"clusters": [w.name for w in fleet.workers]})
    if manager_facts is not None:
        out.config["metadata"]["annotations"] = {
            MANAGER_FACTS_ANNOTATION: json.dumps(manager_facts, sort_keys=True, separators=(",", ":"))
        }
    out.admission_check = _obj(
        "AdmissionCheck",
        ADMISSION_CHECK_NAME,
        spec={
            "controllerName": MULTIKUEUE_CONTROLLER,
            "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": MULTIKUEUE_CONFIG_NAME},
        },
    )
    models = sorted({q.gpu_model for queue in fleet.queues for q in queue.quotas}, key=lambda m: m.value)
    out.flavors = [
        _obj("ResourceFlavor", flavor_name(gpu_slug(m)), spec={"nodeLabels": {FLEET_GPU_LABEL: gpu_slug(m)}})
        for m in models
    ]
    # a job labelled with a priority class gets a Workload on the manager only if the class exists here too
    out.priority_classes = [
        _obj(
            "WorkloadPriorityClass",
            pc.name,
            value=pc.value,
            **({"description": pc.description} if pc.description else {}),
        )
        for pc in fleet.priority_classes
    ]
    for queue in fleet.queues:
        flavors = [
            {"name": flavor_name(gpu_slug(q.gpu_model)), "resources": [{"name": GPU_RESOURCE, "nominalQuota": q.gpus}]}
            for q in queue.quotas
        ]
        out.cluster_queues.append(
            _obj(
                "ClusterQueue",
                queue.name,
                spec={
                    "namespaceSelector": {"matchLabels": {NAMESPACE_LABEL: queue_namespace(queue)}},
                    "resourceGroups": [{"coveredResources": [GPU_RESOURCE], "flavors": flavors}],
                    # one cohort: a queue dispatches on quota its sibling leaves unused, and reclaims its own when needed
                    # withinClusterQueue: the manager is where a fleet job waits (its quota is the workers' sum), so a
                    # higher priority class preempts a lower one of its own queue here, as it would on a worker (the CRD's
                    # default is Never: priorities would only order the wait)
                    "cohortName": MANAGER_COHORT,
                    "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                    "admissionChecksStrategy": {"admissionChecks": [{"name": ADMISSION_CHECK_NAME}]},
                },
            )
        )
        out.local_queues.append(
            _obj("LocalQueue", queue.name, namespace=queue_namespace(queue), spec={"clusterQueue": queue.name})
        )
    for ns in dict.fromkeys(queue_namespace(q) for q in fleet.queues):
        out.namespaces.append(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": ns, "labels": {**FLEET_PART_OF, **TEAM_NAMESPACE_PSS}},
            }
        )
    return out


def with_cohort_limits(cq: Mapping[str, Any], workers: Sequence[Mapping[str, Any] | None]) -> dict[str, Any]:
    """The ClusterQueue's spec with the cohort limits its workers give it (``stacks/plan/fleet.cohort_limits``) on
    its GPU resources: without them the manager's cohort lets a queue be dispatched past what the workers can give
    it, and those jobs hold manager quota while no worker admits them."""
    spec = json.loads(json.dumps(cq["spec"]))
    flavors = spec["resourceGroups"][0]["flavors"]
    nominal = {
        f["name"].removeprefix("fleet-"): r["nominalQuota"]
        for f in flavors
        for r in f["resources"]
        if r["name"] == GPU_RESOURCE
    }
    limits = cohort_limits(
        cq["metadata"]["name"], spec["namespaceSelector"]["matchLabels"][NAMESPACE_LABEL], nominal, workers
    )
    for flavor in flavors:
        for res in flavor["resources"]:
            if res["name"] == GPU_RESOURCE:
                res.update(limits[flavor["name"].removeprefix("fleet-")])
    return spec


def multikueue_config(fleet: Fleet) -> dict[str, Any]:
    """The ``multiKueue`` block of ``config.kueue.x-k8s.io/v1beta2`` Configuration (durations as Go strings)."""
    block: dict[str, Any] = {
        "gcInterval": f"{fleet.gc_interval_seconds}s",
        "origin": fleet.origin,
        "workerLostTimeout": f"{fleet.worker_lost_timeout_seconds}s",
        "dispatcherName": DISPATCHERS[fleet.dispatcher],
    }
    if fleet.dispatcher == Dispatcher.INCREMENTAL:
        block["incrementalDispatcherConfig"] = {"stepSize": fleet.incremental_step_size}
    return block
