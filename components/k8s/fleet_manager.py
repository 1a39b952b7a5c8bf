"""A fleet manager: Kueue with MultiKueue, the TrainJob CRD (with ``managedBy``), the fleet's queues and one
MultiKueueCluster per worker, whose kubeconfig Secret comes from the worker stack's output."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s

from catalog import GpuModel
from components.k8s.network_policies import system_network_policies
from render.network_policies import isolated_namespace
from components.charts import KUBEFLOW_TRAINER, KUEUE
from components.image_digests import pinned_chart_values
from components.k8s.custom_resources import custom_resource, kubernetes_provider_version, namespace
from components.k8s.kubeflow import BASELINE_PSS, TRAINER_NAMESPACE
from components.k8s.kueue import KUEUE_NAMESPACE, RESTRICTED_PSS
from components.image_digests import pin_images
from render.fleet import FLEET_PART_OF, fleet_runtimes, runtime_pod_template
from render.fleet_manager import (
    KUBECONFIG_KEY,
    WORKER_FACTS_ANNOTATION,
    ManagerObjects,
    kubeconfig_secret_name,
    with_cohort_limits,
)
from render.trainer import trainer_values


class FleetManager(pulumi.ComponentResource):
    """Installs Kueue (``kueue``, pinned chart) configured as a MultiKueue manager (``multiKueue`` block, the workers'
    integrations) and Kubeflow Trainer (``kubeflow-trainer``: the TrainJob CRD with ``spec.managedBy``, which Kueue
    defaults to ``kueue.x-k8s.io/multikueue`` here so the manager's Trainer leaves the job to the worker). Then, per
    worker, a Secret ``<worker>-kubeconfig`` (key ``kubeconfig``) and a MultiKueueCluster; the MultiKueueConfig, its
    AdmissionCheck, a ResourceFlavor per GPU model, and per fleet queue a ClusterQueue carrying the check and a
    LocalQueue. The fleet runtimes ``fleet-<gpu model>`` exist here too: Kueue builds a TrainJob's Workload from its
    runtime on the manager.
    """

    def __init__(
        self,
        name: str,
        objects: ManagerObjects,
        kueue_values: dict[str, Any],
        models: Mapping[str, GpuModel],
        kubeconfigs: Mapping[str, pulumi.Output[str]],
        worker_facts: Mapping[str, pulumi.Output[Any]],
        after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
        runtime_image: str | None = None,
    ):
        """``objects``: the rendered MultiKueue objects (``render/fleet_manager.py``); ``kueue_values``: the Kueue
        chart's values with the ``multiKueue`` block; ``models``: the fleet's GPU models by slug (one runtime each);
        ``kubeconfigs`` / ``worker_facts``: each worker's stack outputs, by worker name; ``runtime_image``: the
        fleet runtimes' image as pinned in the fleet file (None: the tag, pinned at this deploy)."""
        super().__init__("gpu-cluster:fleet:FleetManager", name, None, opts)
        workers = [c["metadata"]["name"] for c in objects.clusters]
        child = pulumi.ResourceOptions(parent=self, depends_on=list(after))
        kueue_ns = k8s.core.v1.Namespace(
            f"{name}-kueue-namespace",
            metadata={
                "name": KUEUE_NAMESPACE,
                "labels": {**RESTRICTED_PSS, "app.kubernetes.io/part-of": "gpu-cluster"},
            },
            opts=child,
        )
        kueue = k8s.helm.v3.Release(
            f"{name}-kueue",
            name="kueue",
            chart=f"{KUEUE.repo}/{KUEUE.chart}",
            version=KUEUE.version,
            namespace=KUEUE_NAMESPACE,
            timeout=900,
            values=pinned_chart_values(KUEUE.chart, KUEUE.version, kueue_values),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[kueue_ns]),
        )
        trainer_ns = k8s.core.v1.Namespace(
            f"{name}-trainer-namespace",
            metadata={
                "name": TRAINER_NAMESPACE,
                "labels": {**BASELINE_PSS, "app.kubernetes.io/part-of": "gpu-cluster"},
            },
            opts=child,
        )
        trainer = k8s.helm.v3.Release(
            f"{name}-trainer",
            name="kubeflow-trainer",
            chart=f"{KUBEFLOW_TRAINER.repo}/{KUBEFLOW_TRAINER.chart}",
            version=KUBEFLOW_TRAINER.version,
            namespace=TRAINER_NAMESPACE,
            timeout=900,
            values=pinned_chart_values(KUBEFLOW_TRAINER.chart, KUBEFLOW_TRAINER.version, trainer_values()),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[trainer_ns]),
        )
        team_ns = {
            o["metadata"]["name"]: namespace(f"{name}-ns-{o['metadata']['name']}", o, child) for o in objects.namespaces
        }
        system_network_policies(f"{name}-kueue", KUEUE_NAMESPACE, kueue_ns, self)
        system_network_policies(f"{name}-trainer", TRAINER_NAMESPACE, trainer_ns, self, list(team_ns))
        for ns_name, ns in team_ns.items():  # the manager's queues' namespaces: closed like a worker's
            for obj in isolated_namespace(ns_name):
                custom_resource(
                    f"{name}-netpol-{ns_name}-{obj['metadata']['name']}",
                    obj,
                    pulumi.ResourceOptions(parent=self, depends_on=[ns]),
                )
        secrets = {
            w: k8s.core.v1.Secret(
                f"{name}-kubeconfig-{w}",
                type="Opaque",
                metadata={"name": kubeconfig_secret_name(w), "namespace": KUEUE_NAMESPACE, "labels": FLEET_PART_OF},
                string_data={KUBECONFIG_KEY: pulumi.Output.secret(kubeconfigs[w])},  # type: ignore[arg-type]
                opts=pulumi.ResourceOptions(parent=self, depends_on=[kueue_ns]),
            )
            for w in workers
        }
        created: dict[tuple[str, str], pulumi.Resource] = {}
        for obj in objects.custom_resources():
            kind, obj_name = obj["kind"], obj["metadata"]["name"]
            waits: list[pulumi.Resource] = [kueue]
            if kind == "MultiKueueCluster":
                waits.append(secrets[obj_name])
                facts = worker_facts[obj_name].apply(lambda f: json.dumps(f, sort_keys=True, separators=(",", ":")))
                obj = {**obj, "metadata": {**obj["metadata"], "annotations": {WORKER_FACTS_ANNOTATION: facts}}}
            elif kind == "MultiKueueConfig":
                waits += [created[("MultiKueueCluster", c)] for c in obj["spec"]["clusters"]]
            elif kind == "AdmissionCheck":
                waits.append(created[("MultiKueueConfig", obj["spec"]["parameters"]["name"])])
            elif kind == "ClusterQueue":
                waits += [created[("ResourceFlavor", f["name"])] for f in obj["spec"]["resourceGroups"][0]["flavors"]]
                waits += [
                    created[("AdmissionCheck", c["name"])]
                    for c in obj["spec"]["admissionChecksStrategy"]["admissionChecks"]
                ]
                # the cohort limits mirror the workers' (known once their outputs are)
                obj = {**obj, "spec": _with_limits(obj, worker_facts)}
            elif kind == "LocalQueue":
                waits += [team_ns[obj["metadata"]["namespace"]], created[("ClusterQueue", obj["spec"]["clusterQueue"])]]
            created[(kind, obj_name)] = custom_resource(
                f"{name}-{kind.lower()}-{obj_name}", obj, pulumi.ResourceOptions(parent=self, depends_on=waits)
            )
        per_node = pulumi.Output.all(*worker_facts.values()).apply(
            lambda facts: _gpus_per_node(facts, list(models.values()))
        )
        for slug, model in models.items():
            _runtime(
                f"{name}-runtime-fleet-{slug}",
                model,
                per_node,
                pulumi.ResourceOptions(parent=self, depends_on=[trainer]),
                runtime_image,
            )
        self.register_outputs({"workers": workers})


def _with_limits(cq: dict[str, Any], worker_facts: Mapping[str, pulumi.Output[Any]]) -> pulumi.Output[Any]:
    """The ClusterQueue's spec with the cohort limits its workers give it, once their outputs are known."""
    return pulumi.Output.all(*worker_facts.values()).apply(lambda facts: with_cohort_limits(cq, facts))


def _gpus_per_node(facts: Sequence[Any], models: Sequence[GpuModel]) -> dict[GpuModel, int]:
    """GPUs per node of each model, from the first worker (in spec order) that has it (the fleet rule on runtimes
    refuses workers that disagree); a model no worker has keeps 1 (its jobs are refused by the fleet rules)."""
    out: dict[GpuModel, int] = {}
    for f in facts:
        for gpu in (f or {}).get("gpus", []):
            model = GpuModel(gpu["model"])
            if model in models:
                out.setdefault(model, int(gpu["gpusPerNode"]))
    return {m: out.get(m, 1) for m in models}


def _runtime(
    name: str, model: GpuModel, per_node: pulumi.Output[dict], opts: pulumi.ResourceOptions, image: str | None = None
) -> None:
    """The runtime as the workers render it; its GPUs per node are known once the worker outputs are. ``image``:
    the pinned image of the fleet file instead of the tag (what the workers then run too)."""
    body = per_node.apply(lambda p: _with_image(fleet_runtimes({model: p[model]})[0], image))
    first = fleet_runtimes({model: 1})[0]
    props = {
        "apiVersion": first["apiVersion"],
        "kind": first["kind"],
        "metadata": first["metadata"],
        "spec": body.apply(lambda b: pin_images(b["spec"])),
    }  # pinned as the workers' copies are
    pulumi.CustomResource(
        f"kubernetes:{first['apiVersion']}:{first['kind']}",
        name,
        props,
        pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=kubernetes_provider_version())),
    )


def _with_image(runtime: dict[str, Any], image: str | None) -> dict[str, Any]:
    if image is None:
        return runtime
    for c in runtime_pod_template(runtime)["spec"]["containers"]:
        c["image"] = image  # pin_images leaves an image already by digest as it is
    return runtime
