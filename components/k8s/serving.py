"""Serving: the KEDA and (for multi-node replicas) LeaderWorkerSet controllers, and per inference service its vLLM
workload, Service, PodDisruptionBudget and ScaledObject; on GKE the InferencePool + endpoint picker (the pinned
``inferencepool`` chart), the inference Gateway and each service's HTTPRoute. Objects come rendered from the plan
(``render/serving.py``); this component only orders them."""

from __future__ import annotations

from typing import Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.charts import INFERENCE_POOL, INFERENCE_POOL_CRD_URL, KEDA, LWS
from components.image_digests import pinned_chart_values
from components.k8s.custom_resources import custom_resource, namespace
from components.k8s.network_policies import system_network_policies
from render.serving import ServingObjects

KEDA_NAMESPACE = "keda"
LWS_NAMESPACE = "lws-system"
NEEDS = {"ScaledObject": "keda", "TriggerAuthentication": "keda", "LeaderWorkerSet": "lws"}
"""Kinds whose CRD a release here installs: created after it."""
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
_SHAPE = (
    "containers[*].resources.requests",
    "containers[*].ports",
    "initContainers[*].resources.requests",
    "initContainers[*].ports",
    "nodeSelector",
    "affinity",
    "tolerations",
    "runtimeClassName",
    "priority",
    "topologySpreadConstraints",
    "overhead",
    "resourceClaims",
    "resources",
)
LWS_IMMUTABLE = (
    *(f"spec.leaderWorkerTemplate.{t}.spec.{f}" for t in ("leaderTemplate", "workerTemplate") for f in _SHAPE),
    "spec.leaderWorkerTemplate.size",
)
"""What Kueue's LeaderWorkerSet webhook (v0.19.2) refuses to change while Kueue manages the set (it has a queue
label): ``ValidateUpdate`` -> ``validateImmutablePodTemplateSpec`` compares only the pod specs' shape
(``pkg/util/pod/pod.go`` ``SpecShape``: containers' requests and ports, nodeSelector, affinity, tolerations,
runtimeClassName, priority, topologySpreadConstraints, overhead, resourceClaims, pod-level resources), and the
``LWSImmutableGroupSize`` gate makes ``leaderWorkerTemplate.size`` immutable. A change to one of them deletes the set
and creates it again (the service is down meanwhile); anything else (image, arguments, env, probes) is an ordinary
rolling update."""


class Serving(pulumi.ComponentResource):
    """Installs KEDA (``keda``), LeaderWorkerSet (``lws-system``, only when a replica spans nodes) and, on GKE, one
    ``inferencepool`` release per service; then the rendered serving objects, each after the release that serves its
    kind. ``after``: what must exist first (the cluster; with Kueue, its release and the serving namespace).
    ``inference_crd_managed``: the cluster installs the InferencePool CRD itself (GKE from the version validation
    requires, ``stacks/validate/serving_gateway.py``): creating it again would fail with AlreadyExists.
    ``workload_after``/``ready_timeout_s``, by service: its GPU node pool, which its Deployment or LeaderWorkerSet
    waits for, and how long Pulumi waits for that workload to be ready (its ready budget; Pulumi's default is 10
    minutes, shorter than a cold node, image pull and weights load)."""

    def __init__(
        self,
        name: str,
        objects: ServingObjects,
        lws: bool,
        after: Sequence[pulumi.Resource] = (),
        inference_crd_managed: bool = False,
        workload_after: Mapping[str, Sequence[pulumi.Resource]] | None = None,
        ready_timeout_s: Mapping[str, int] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:serving:Serving", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(after))
        releases: dict[str, pulumi.Resource] = {}
        keda_ns = k8s.core.v1.Namespace(
            f"{name}-keda-namespace",
            metadata={"name": KEDA_NAMESPACE, "labels": {"app.kubernetes.io/part-of": "gpu-cluster"}},
            opts=child,
        )
        releases["keda"] = k8s.helm.v3.Release(
            f"{name}-keda",
            name="keda",
            chart=KEDA.chart,
            version=KEDA.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=KEDA.repo),
            namespace=KEDA_NAMESPACE,
            # KEDA's operator reads the metrics as its workload identity (GKE: the chart annotates its ServiceAccount)
            values=pinned_chart_values(KEDA.chart, KEDA.version, objects.metrics.keda_values()),
            timeout=600,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[keda_ns, *after]),
        )
        system_network_policies(f"{name}-keda", KEDA_NAMESPACE, keda_ns, self)  # webhooks, metrics API only
        if lws:
            lws_ns = k8s.core.v1.Namespace(
                f"{name}-lws-namespace",
                metadata={"name": LWS_NAMESPACE, "labels": {"app.kubernetes.io/part-of": "gpu-cluster"}},
                opts=child,
            )
            releases["lws"] = k8s.helm.v3.Release(
                f"{name}-lws",
                name="lws",
                chart=f"{LWS.repo}/{LWS.chart}",
                version=LWS.version,
                namespace=LWS_NAMESPACE,
                values=pinned_chart_values(LWS.chart, LWS.version, {}),
                timeout=600,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[lws_ns]),
            )
            system_network_policies(f"{name}-lws", LWS_NAMESPACE, lws_ns, self)
        first: list[pulumi.Resource] = list(after)
        if objects.namespace is not None:
            first.append(namespace(f"{name}-namespace", objects.namespace, child))
        created: dict[int, pulumi.Resource] = {}

        def create(obj: dict, waits: list[pulumi.Resource], timeout_s: int | None = None) -> pulumi.Resource:
            if obj["kind"] in NEEDS:
                waits = [*waits, releases[NEEDS[obj["kind"]]]]
            wait = None if timeout_s is None else f"{timeout_s // 60}m"
            opts = pulumi.ResourceOptions(
                parent=self,
                depends_on=waits,
                custom_timeouts=pulumi.CustomTimeouts(create=wait, update=wait) if wait else None,
            )
            if obj["kind"] == "LeaderWorkerSet" and QUEUE_LABEL in obj["metadata"].get("labels", {}):
                opts = pulumi.ResourceOptions.merge(
                    opts, pulumi.ResourceOptions(replace_on_changes=list(LWS_IMMUTABLE), delete_before_replace=True)
                )
            res = custom_resource(f"{name}-{obj['kind'].lower()}-{obj['metadata']['name']}", obj, opts)
            created[id(obj)] = res
            return res

        # the endpoint pickers name no queue: Kueue's webhook gives such a pod the namespace's `default` LocalQueue
        # only if it exists when the pod is created, else the pod stays gated; so the queue, its ClusterQueue and
        # flavor come first and the pool releases wait for them
        queue = [create(obj, first) for obj in objects.default_queue]
        crd: list[pulumi.Resource] = []
        if any(svc.inference_pool_values is not None for svc in objects.services) and not inference_crd_managed:
            crd.append(k8s.yaml.v2.ConfigFile(f"{name}-inferencepool-crd", file=INFERENCE_POOL_CRD_URL, opts=child))
        pools: dict[str, pulumi.Resource] = {}
        for svc in objects.services:
            if svc.inference_pool_values is not None:
                pools[svc.name] = k8s.helm.v3.Release(
                    f"{name}-{svc.name}-pool",
                    name=svc.name,
                    chart=f"{INFERENCE_POOL.repo}/{INFERENCE_POOL.chart}",
                    version=INFERENCE_POOL.version,
                    namespace=svc.service["metadata"]["namespace"],
                    values=svc.inference_pool_values,
                    timeout=600,
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[*first, *queue, *crd]),
                )
        for obj in objects.objects():
            if obj["kind"] == "Namespace" or id(obj) in created or any(obj is s.workload for s in objects.services):
                continue
            waits = [*first]
            if obj["kind"] == "HTTPRoute":  # only the routes (and the pool releases) need the InferencePool CRD
                waits += [*crd, *(pools[b["name"]] for rule in obj["spec"]["rules"] for b in rule["backendRefs"])]
            create(obj, waits)
        for svc in objects.services:  # the workload: after its GPU pool, waited for as long as it may take to start
            create(
                svc.workload, [*first, *(workload_after or {}).get(svc.name, ())], (ready_timeout_s or {}).get(svc.name)
            )
        self.register_outputs({})
