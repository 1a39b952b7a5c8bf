"""The Kueue/Kubeflow path as the program registers it (under the recording engine): charts, objects, order,
providers, and no known default credential anywhere."""
from __future__ import annotations

import copy
import json

import pytest
import yaml

from components.charts import KATIB_MANIFESTS, KUBEFLOW_PIPELINES_MANIFESTS
from components.manifest_secrets import KNOWN_DEFAULT_CREDENTIALS
from preview.engine import run_program
from scheduling.kueue import render_kueue
from scheduling.trainer import training_runtimes
from tests.recorded import of_type, one, parent_of
from tests.scheduling_fixtures import EKS_TEAMS, GKE_TEAMS, flat_config, spec_and_facts

KUEUE_TYPES = ("kubernetes:kueue.x-k8s.io/v1beta2:", "kubernetes:trainer.kubeflow.org/v1alpha1:")


@pytest.fixture(scope="module")
def gke():
    raw = copy.deepcopy(GKE_TEAMS)
    raw["scheduling"]["kubeflow"] = {"katib": True, "pipelines": True}
    return raw, run_program(flat_config(raw))


def _custom(rec):
    return [r for r in rec.resources if r.type.startswith(KUEUE_TYPES)]


def test_kueue_chart_is_pinned_and_carries_the_rendered_configuration(gke):
    _, rec = gke
    release = one(rec, "kubernetes:helm.sh/v3:Release", "kueue-chart")
    inputs = release.redacted_inputs
    assert (inputs["chart"], inputs["version"], inputs["name"], inputs["namespace"]) == (
        "oci://registry.k8s.io/kueue/charts/kueue", "0.19.2", "kueue", "kueue-system")
    config = yaml.safe_load(inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"]["timeout"] == "900s"
    assert config["fairSharing"]["preemptionStrategies"] == ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
    assert inputs["values"]["controllerManager"]["replicas"] == 2
    assert parent_of(rec, release).type == "gpu-cluster:scheduling:Kueue"
    ns = one(rec, "kubernetes:core/v1:Namespace", "kueue-namespace")
    assert ns.urn in release.dependencies
    assert ns.redacted_inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_every_kueue_object_is_registered_as_rendered_after_the_chart(gke):
    raw, rec = gke
    spec, facts = spec_and_facts(raw)
    objects = render_kueue(spec.scheduling, facts)
    expected = {(o["kind"], o["metadata"]["name"]): o for o in objects.custom_resources()}
    recorded = {(r.type.rsplit(":", 1)[1], r.redacted_inputs["metadata"]["name"]): r for r in _custom(rec)
                if r.type.startswith(KUEUE_TYPES[0])}
    assert set(recorded) == set(expected)
    release = one(rec, "kubernetes:helm.sh/v3:Release", "kueue-chart")
    for key, r in recorded.items():
        assert r.redacted_inputs == expected[key], key
        assert release.urn in r.dependencies, f"{key} must wait for the CRDs and webhooks of the chart"
        assert parent_of(rec, r).type == "gpu-cluster:scheduling:Kueue"
        assert "ml-train-k8s" in r.provider, f"{key} must go through the cluster's Kubernetes provider"
    lq = recorded[("LocalQueue", "product")]
    ns = one(rec, "kubernetes:core/v1:Namespace", "kueue-ns-product-ml")
    assert ns.urn in lq.dependencies and lq.redacted_inputs["metadata"]["namespace"] == "product-ml"


def test_trainer_chart_and_one_runtime_per_pool(gke):
    raw, rec = gke
    release = one(rec, "kubernetes:helm.sh/v3:Release", "kubeflow-trainer")
    inputs = release.redacted_inputs
    assert (inputs["chart"], inputs["version"], inputs["namespace"]) == (
        "oci://ghcr.io/kubeflow/charts/kubeflow-trainer", "2.3.0", "kubeflow-system")
    spec, facts = spec_and_facts(raw)
    expected = training_runtimes(facts, render_kueue(spec.scheduling, facts).placements)
    runtimes = of_type(rec, "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime")
    by_name = {r.redacted_inputs["metadata"]["name"]: r.redacted_inputs for r in runtimes}  # registration is async
    assert by_name == {e["metadata"]["name"]: e for e in expected}
    assert all(release.urn in r.dependencies for r in runtimes)


def test_katib_and_pipelines_use_pinned_manifests_and_generated_secrets(gke):
    _, rec = gke
    dirs = {r.name: r.redacted_inputs["directory"] for r in of_type(rec, "kubernetes:kustomize/v2:Directory")}
    assert dirs == {"kubeflow-katib-manifests": KATIB_MANIFESTS,
                    "kubeflow-pipelines-cluster-resources": KUBEFLOW_PIPELINES_MANIFESTS["cluster"],
                    "kubeflow-pipelines-manifests": KUBEFLOW_PIPELINES_MANIFESTS["platform"]}
    assert "/tree/v0.18.0/" in KATIB_MANIFESTS and "/tree/2.5.0/" in KUBEFLOW_PIPELINES_MANIFESTS["platform"]
    passwords = of_type(rec, "random:index/randomPassword:RandomPassword")
    assert sorted(p.name for p in passwords) == ["kubeflow-katib-mysql-password", "kubeflow-pipelines-minio-access-key",
                                                 "kubeflow-pipelines-minio-secret-key",
                                                 "kubeflow-pipelines-mysql-password"]
    assert all(p.redacted_inputs["length"] >= 20 and p.redacted_inputs["special"] is False for p in passwords)
    platform = one(rec, "kubernetes:kustomize/v2:Directory", "kubeflow-pipelines-manifests")
    assert one(rec, "kubernetes:kustomize/v2:Directory", "kubeflow-pipelines-cluster-resources").urn \
        in platform.dependencies


def test_no_known_default_credential_is_registered_anywhere(gke):
    _, rec = gke
    dump = json.dumps([r.redacted_inputs for r in rec.resources])
    for secret, values in KNOWN_DEFAULT_CREDENTIALS.items():
        for key, value in values.items():
            if value and value != "root":
                assert value not in dump, f"{secret}.{key} default leaked"
    for kubeflow_default in ("12341234", "pUBnBOY80SnXgjibTYM9ZWNzY2xreNGQok", "7d16fee92f8d11b8940b081b3f8b8acb",
                             "dGVzdA=="):
        assert kubeflow_default not in dump


def test_katib_and_pipelines_are_off_by_default():
    rec = run_program(flat_config(GKE_TEAMS))
    assert not of_type(rec, "kubernetes:kustomize/v2:Directory")
    assert not of_type(rec, "random:index/randomPassword:RandomPassword")
    assert one(rec, "gpu-cluster:scheduling:Kubeflow")


def test_eks_stack_gets_the_eks_network_topology_through_its_own_provider():
    rec = run_program(flat_config(EKS_TEAMS))
    topology = one(rec, "kubernetes:kueue.x-k8s.io/v1beta2:Topology")
    assert topology.redacted_inputs["metadata"]["name"] == "eks-network"
    flavor = one(rec, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "kueue-flavor-p5")
    assert flavor.redacted_inputs["spec"]["topologyName"] == "eks-network"
    assert "::llm-k8s::" in flavor.provider


@pytest.mark.parametrize("scheduling", [None, "slurm"])
def test_no_kueue_without_workload_kubeflow(scheduling):
    raw = copy.deepcopy(GKE_TEAMS)
    if scheduling is None:
        del raw["scheduling"]
    else:
        raw["scheduling"]["workload"] = scheduling
        raw["scheduling"].pop("topology")
    rec = run_program(flat_config(raw))
    assert not [r for r in rec.resources if r.type.startswith(("gpu-cluster:scheduling:Kueue",
                                                               "gpu-cluster:scheduling:Kubeflow", *KUEUE_TYPES))]
