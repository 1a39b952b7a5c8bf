"""Two ways a tenant could escape its lane through Kubeflow, on the example stacks as recorded: the Katib UI
(``gke-kueue``) and the Kubeflow Pipelines API (``eks-kueue``) authenticate nobody and act with cluster-wide rights.
What the recorded kustomize transforms make of the upstream objects (UI and cache deployer at 0 replicas, the deployer's
ClusterRole emptied, ``kubeflow`` at Pod Security baseline), and what the stack's NetworkPolicies let a tenant's pod
reach."""

from __future__ import annotations

import pulumi
import pytest

from tests.support.kube.admission import k8s_objects
from tests.support.helm.examples import recording
from tests.support.kube.network_policy import Peer, ingress_allowed
from tests.support.preview.recorded import one
from tests.support.kube.upstream_manifests import (
    CACHE_DEPLOYER,
    CACHE_DEPLOYER_ROLE,
    CACHE_SERVER,
    CLUSTER_ROLE,
    DEPLOYMENT,
    KATIB_UI,
    KUBEFLOW_NAMESPACE,
    NAMESPACE,
)

DIRECTORY = "kubernetes:kustomize/v2:Directory"
ML_PIPELINE = Peer("kubeflow", {"app": "ml-pipeline"})
KATIB_UI_POD = Peer("kubeflow", {"katib.kubeflow.org/component": "ui"})
KATIB_DB = Peer("kubeflow", {"katib.kubeflow.org/component": "db-manager"})
KATIB_CONTROLLER = Peer("kubeflow", {"katib.kubeflow.org/component": "controller"})


def transformed(stack: str, directory: str, type_: str, doc: dict) -> dict:
    registered = one(recording(stack), DIRECTORY, directory)
    props, opts = doc, pulumi.ResourceOptions()
    for transform in registered.transforms:
        result = transform(pulumi.ResourceTransformArgs(True, type_, f"{directory}:child", props, opts))
        if result is not None:
            props, opts = result.props, result.opts
    return props


def policies(stack: str) -> list[dict]:
    return [o for o in k8s_objects(recording(stack)) if o["kind"] == "NetworkPolicy"]


def test_the_katib_ui_does_not_run():
    assert transformed("gke-kueue", "kubeflow-katib-manifests", DEPLOYMENT, KATIB_UI)["spec"]["replicas"] == 0


@pytest.mark.parametrize(
    "stack, directory", [("gke-kueue", "kubeflow-katib-manifests"), ("eks-kueue", "kubeflow-pipelines-manifests")]
)
def test_the_kubeflow_namespace_enforces_baseline(stack, directory):
    labels = transformed(stack, directory, NAMESPACE, KUBEFLOW_NAMESPACE)["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"


def test_the_pipelines_cache_deployer_and_server_do_not_run_and_lose_their_cluster_rights():
    for doc in (CACHE_DEPLOYER, CACHE_SERVER):
        assert transformed("eks-kueue", "kubeflow-pipelines-manifests", DEPLOYMENT, doc)["spec"]["replicas"] == 0
    role = transformed("eks-kueue", "kubeflow-pipelines-cluster-resources", CLUSTER_ROLE, CACHE_DEPLOYER_ROLE)
    assert role["rules"] == []


@pytest.mark.parametrize(
    "source", [Peer("pretraining", {"app": "trainer"}), Peer("default", {}), Peer("kueue-system", {"app": "kueue"})]
)
def test_a_tenant_cannot_reach_the_pipelines_api(source):
    for port in (8888, 8887):
        assert not ingress_allowed(policies("eks-kueue"), source, ML_PIPELINE, port)


def test_pipeline_pods_and_the_ui_in_kubeflow_still_reach_the_api():
    assert ingress_allowed(policies("eks-kueue"), Peer("kubeflow", {"app": "ml-pipeline-ui"}), ML_PIPELINE, 8888)


def test_a_tenant_cannot_reach_katib_but_its_trials_report_metrics():
    netpols = policies("gke-kueue")
    tenant = Peer("research", {"job": "trial"})
    assert not ingress_allowed(netpols, tenant, KATIB_UI_POD, 8080)
    assert not ingress_allowed(netpols, tenant, KATIB_CONTROLLER, 8080)
    assert ingress_allowed(netpols, tenant, KATIB_DB, 6789)
    assert not ingress_allowed(netpols, Peer("default", {}), KATIB_DB, 6789)
    assert ingress_allowed(netpols, Peer("api-server", {}), KATIB_CONTROLLER, 8443)  # the webhook


@pytest.mark.parametrize("stack", ["gke-kueue", "eks-kueue"])
def test_network_policies_are_valid(stack):
    import kubernetes_validate

    from tests.support.kube.schema import K8S_VERSION

    netpols = policies(stack)
    assert len(netpols) >= 2
    for obj in netpols:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def test_eks_enforces_network_policies():
    addon = one(recording("eks-kueue"), "aws:eks/addon:Addon", "llm-shared-vpc-cni")
    assert addon.inputs["addonName"] == "vpc-cni"
    assert '"enableNetworkPolicy": "true"' in addon.inputs["configurationValues"]
