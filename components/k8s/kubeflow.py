"""Kubeflow on the Kueue path: Kubeflow Trainer (pinned chart, with JobSet) and one training runtime per GPU pool;
optionally Katib and Kubeflow Pipelines."""

from __future__ import annotations

from typing import Any, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.network_policies import system_network_policies
from components.charts import KUBEFLOW_TRAINER
from components.image_digests import pinned_chart_values
from components.k8s.custom_resources import custom_resource
from components.k8s.katib import Katib
from components.k8s.kubeflow_pipelines import KubeflowPipelines
from render.trainer import trainer_values

TRAINER_NAMESPACE = "kubeflow-system"
BASELINE_PSS = {
    "pod-security.kubernetes.io/enforce": "baseline",
    "pod-security.kubernetes.io/warn": "restricted",
    "pod-security.kubernetes.io/audit": "restricted",
}


class Kubeflow(pulumi.ComponentResource):
    """Installs Kubeflow Trainer into ``kubeflow-system`` (``helm.v3.Release``, release name ``kubeflow-trainer``,
    which also installs its CRDs and JobSet) and, once ready, a ``torch-<pool>`` ClusterTrainingRuntime per GPU pool
    carrying the pool's node selector, tolerations, GPUs per node and Kueue placement annotation. Kueue admits
    TrainJobs through its ``trainer.kubeflow.org/trainjob`` integration. Katib and Kubeflow Pipelines are added when
    ``scheduling.kubeflow`` asks for them, with every credential generated as a Pulumi secret.
    """

    release: k8s.helm.v3.Release
    runtimes: list[str]
    access: list[str]
    """What a tenant can reach, one line per control (``render/tenancy.py``)."""

    def __init__(
        self,
        name: str,
        runtimes: Sequence[dict[str, Any]],
        katib: bool = False,
        pipelines: bool = False,
        policies: Sequence[dict[str, Any]] = (),
        access: Sequence[str] = (),
        team_namespaces: Sequence[str] = (),
        after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        """``runtimes``: the ClusterTrainingRuntimes rendered from the plan (``render/trainer.py``); ``policies``: the
        NetworkPolicies of Katib/Pipelines (``render/network_policies.py``); ``access``: what a tenant can reach
        (``render/tenancy.py``)."""
        super().__init__("gpu-cluster:scheduling:Kubeflow", name, None, opts)
        # the roots (namespace, Katib, Pipelines) wait for ``after``: the cluster and its system pool
        child = pulumi.ResourceOptions(parent=self, depends_on=list(after))
        ns = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata={
                "name": TRAINER_NAMESPACE,
                "labels": {**BASELINE_PSS, "app.kubernetes.io/part-of": "gpu-cluster"},
            },
            opts=child,
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-trainer",
            name="kubeflow-trainer",
            chart=f"{KUBEFLOW_TRAINER.repo}/{KUBEFLOW_TRAINER.chart}",
            version=KUBEFLOW_TRAINER.version,
            namespace=TRAINER_NAMESPACE,
            timeout=900,
            values=pinned_chart_values(KUBEFLOW_TRAINER.chart, KUBEFLOW_TRAINER.version, trainer_values()),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[ns]),
        )
        # webhooks from the API server, TrainJob status from the team namespaces, metrics from scrapers only
        system_network_policies(f"{name}-trainer", TRAINER_NAMESPACE, ns, self, team_namespaces)
        after_release = pulumi.ResourceOptions(parent=self, depends_on=[self.release])
        for obj in runtimes:
            custom_resource(f"{name}-runtime-{obj['metadata']['name']}", obj, after_release)
        self.runtimes = [r["metadata"]["name"] for r in runtimes]
        installs: list[pulumi.Resource] = []
        if katib:
            installs.append(Katib(f"{name}-katib", after=after, opts=pulumi.ResourceOptions(parent=self)))
        if pipelines:
            installs.append(
                KubeflowPipelines(f"{name}-pipelines", after=after, opts=pulumi.ResourceOptions(parent=self))
            )
        if installs:  # the namespace comes with the manifests; its NetworkPolicies follow them
            for obj in policies:
                custom_resource(
                    f"{name}-netpol-{obj['metadata']['name']}",
                    obj,
                    pulumi.ResourceOptions(parent=self, depends_on=installs),
                )
        self.access = list(access)
        self.register_outputs({"namespace": TRAINER_NAMESPACE, "runtimes": self.runtimes, "access": self.access})
