"""Every rendered Kueue and Trainer object against the upstream CRDs (OpenAPI v3, closed objects, CEL rules), team
namespaces against the Kubernetes OpenAPI schema, and the Helm values against the pinned charts' values.yaml."""

from __future__ import annotations

import re

import kubernetes_validate
import pytest
import yaml

from components.charts import KUBEFLOW_TRAINER, KUEUE
from preview.engine import PROJECT_ROOT, read_stack_file
from render.kueue import render_kueue
from render.kueue_config import manager_config, kueue_values
from render.trainer import trainer_values, training_runtimes
from stacks.validate.load import decode_config
from tests.conftest import require_shared
from tests.support.kube.crd_schemas import cel_errors, schema_errors
from tests.support.spec.edit import DELETE, edit
from tests.support.helm.values import unknown_keys
from tests.support.kube.schema import K8S_VERSION
from tests.support.spec.scheduling_fixtures import EKS_QUEUED, EKS_TEAMS, GKE_TEAMS, spec_and_facts

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _raw_stack(stack: str) -> dict:
    return decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"))


SPECS = {
    "gke-fixture": GKE_TEAMS,
    "eks-fixture": EKS_TEAMS,
    "gke-kueue": _raw_stack("gke-kueue"),
    "eks-kueue": _raw_stack("eks-kueue"),
    "gke-flex-start-tas": _raw_stack("gke-flex-start-tas"),
    "eks-queued-fixture": EKS_QUEUED,
}


def _rendered(raw):
    spec, facts = spec_and_facts(raw)
    objects = render_kueue(spec.scheduling, facts)
    return objects, objects.custom_resources() + training_runtimes(facts, objects.placements)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_custom_resource_passes_its_crd_schema_and_cel_rules(name):
    _, crs = _rendered(SPECS[name])
    kinds = {o["kind"] for o in crs}
    assert {"ResourceFlavor", "ClusterQueue", "LocalQueue", "Cohort", "ClusterTrainingRuntime"} <= kinds
    evaluated = 0
    for obj in crs:
        where = f"{obj['kind']} {obj['metadata']['name']}"
        assert schema_errors(obj) == [], where
        errors, count = cel_errors(obj)
        assert errors == [], where
        evaluated += count
        assert DNS_SUBDOMAIN.match(obj["metadata"]["name"]) and len(obj["metadata"]["name"]) <= 63, where
    assert evaluated >= 10, "the CRDs' CEL rules were not reached"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_team_namespaces_are_valid_core_objects(name):
    objects, _ = _rendered(SPECS[name])
    assert objects.namespaces
    for ns in objects.namespaces:
        kubernetes_validate.validate(ns, K8S_VERSION, strict=True)


def test_the_validators_catch_what_the_api_server_would_refuse():
    objects, _ = _rendered(GKE_TEAMS)
    cq = objects.cluster_queues[0]
    typo = edit(cq, "spec.resourceGroups[0].flavors[0].resources[0].nominalQouta", 1)
    assert any("nominalQouta" in e for e in schema_errors(typo))
    no_cohort = edit(cq, "spec.cohortName", DELETE)
    errors, _ = cel_errors(no_cohort)
    assert errors == ["spec: borrowingLimit must be nil when cohort is empty"]
    covered = cq["spec"]["resourceGroups"][0]["coveredResources"]
    errors, _ = cel_errors(edit(no_cohort, "spec.resourceGroups[0].coveredResources", [*covered, "cpu"]))
    assert "spec.resourceGroups[0]: flavors must have the same number of resources as the coveredResources" in errors
    topo = objects.topologies[0]
    hostname_first = edit(topo, "spec.levels", topo["spec"]["levels"][::-1])
    assert cel_errors(hostname_first)[0], "hostname must be the lowest level"
    no_labels = edit(objects.flavors[0], "spec.nodeLabels", {})
    assert cel_errors(no_labels)[0] == ["spec: at least one nodeLabel is required when topology is set"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate({**objects.namespaces[0], "spec": {"finalizerz": []}}, K8S_VERSION, strict=True)


def _values_yaml(pin) -> dict:
    return yaml.safe_load(require_shared("schemas", pin.default_values).read_text(encoding="utf-8"))


def test_kueue_values_are_known_to_the_pinned_chart():
    spec, _ = spec_and_facts(GKE_TEAMS)
    assert unknown_keys(kueue_values(spec.scheduling), _values_yaml(KUEUE)) == []
    assert unknown_keys({"controllerManager": {"replicaz": 2}}, _values_yaml(KUEUE)), "the check must bite"


def test_trainer_values_are_known_to_the_pinned_chart():
    assert unknown_keys(trainer_values(), _values_yaml(KUBEFLOW_TRAINER)) == []


@pytest.mark.parametrize(
    "pin, chart_yaml",
    [
        (KUEUE, "kueue/v0.19.2/charts/kueue/Chart.yaml"),
        (KUBEFLOW_TRAINER, "kubeflow-trainer/v2.3.0/charts/kubeflow-trainer/Chart.yaml"),
    ],
)
def test_chart_pins_match_the_charts_in_shared_schemas(pin, chart_yaml):
    chart = yaml.safe_load(require_shared("schemas", chart_yaml).read_text(encoding="utf-8"))
    assert (chart["name"], chart["version"]) == (pin.chart, pin.version)


CONFIG_FIELDS = {
    # config.kueue.x-k8s.io/v1beta2 Configuration (Kueue apis/config/v1beta2/configuration_types.go)
    "": {
        "apiVersion",
        "kind",
        "namespace",
        "webhook",
        "leaderElection",
        "metrics",
        "health",
        "pprofBindAddress",
        "controller",
        "tls",
        "manageJobsWithoutQueueName",
        "managedJobsNamespaceSelector",
        "internalCertManagement",
        "waitForPodsReady",
        "clientConnection",
        "integrations",
        "multiKueue",
        "fairSharing",
        "admissionFairSharing",
        "resources",
        "featureGates",
        "objectRetentionPolicies",
    },
    "waitForPodsReady": {"timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout"},
    "waitForPodsReady.requeuingStrategy": {"timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"},
    "fairSharing": {"preemptionStrategies"},
    "integrations": {"frameworks", "externalFrameworks", "labelKeysToCopy"},
    "resources": {"excludeResourcePrefixes", "transformations", "deviceClassMappings"},
    "clientConnection": {"qps", "burst"},
    "health": {"healthProbeBindAddress", "readinessEndpointName", "livenessEndpointName"},
    "metrics": {"bindAddress", "enableClusterQueueResources", "customLabels"},
    "webhook": {"port", "host", "certDir"},
}
FRAMEWORKS = {
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
}


def test_manager_configuration_uses_only_v1beta2_fields_and_keeps_the_charts_endpoints():
    spec, _ = spec_and_facts(GKE_TEAMS)
    config = manager_config(spec.scheduling)
    for path, allowed in CONFIG_FIELDS.items():
        node = config
        for part in filter(None, path.split(".")):
            node = node[part]
        assert set(node) <= allowed, (path, set(node) - allowed)
    assert set(config["integrations"]["frameworks"]) <= FRAMEWORKS
    chart_default = yaml.safe_load(_values_yaml(KUEUE)["managerConfig"]["controllerManagerConfigYaml"])
    for key in ("apiVersion", "kind", "health", "metrics", "webhook", "leaderElection"):
        assert config[key] == chart_default[key], key  # the chart's probes, Service ports and lock still match
    assert {"trainer.kubeflow.org/trainjob", "jobset.x-k8s.io/jobset"} <= set(
        chart_default["integrations"]["frameworks"]
    )
