"""What the fleet example creates, checked by the real peers that run here: every MultiKueue and Kueue object of the
manager against the Kueue 0.19.2 CRDs (schema and CEL rules), the runtimes against Trainer's CRD, Kueue's manager
configuration as real Helm renders it into the chart's ConfigMap, and the worker's RBAC for the dispatched kinds."""

from __future__ import annotations

import json

import pytest
import yaml
from pulumi.runtime import rpc

from preview.engine import redact
from render.fleet_manager import DISPATCHERS, WORKER_FACTS_ANNOTATION
from tests.support.kube.crd_schemas import cel_errors, schema_errors
from tests.support.helm.examples import recording, rendered

CR_PREFIX = "kubernetes:kueue.x-k8s.io/v1beta2:"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"


def objects(stack: str, prefix: str) -> list[dict]:
    return [redact(r.inputs) for r in recording(stack).resources if r.type.startswith(prefix)]


def test_manager_objects_are_valid_kueue_0_19_2_objects():
    objs = objects("fleet", CR_PREFIX)
    kinds = sorted(o["kind"] for o in objs)
    assert kinds == sorted(
        ["MultiKueueCluster"] * 2
        + ["MultiKueueConfig", "AdmissionCheck"]
        + ["ResourceFlavor"] * 3
        + ["WorkloadPriorityClass"] * 3
        + ["ClusterQueue"] * 2
        + ["LocalQueue"] * 2
    ), kinds
    rules = 0
    for obj in objs:
        assert schema_errors(obj) == [], obj
        errs, n = cel_errors(obj)
        assert errs == [], obj
        rules += n
    assert rules > 0  # the CEL rules were evaluated, not skipped


def test_multikueue_wiring():
    by_kind: dict[str, list[dict]] = {}
    for o in objects("fleet", CR_PREFIX):
        by_kind.setdefault(o["kind"], []).append(o)
    (config,) = by_kind["MultiKueueConfig"]
    assert config["spec"]["clusters"] == ["gke", "eks"]  # spec order: the Incremental dispatcher's order
    clusters = {c["metadata"]["name"]: c for c in by_kind["MultiKueueCluster"]}
    assert clusters["gke"]["spec"]["clusterSource"]["kubeConfig"] == {
        "locationType": "Secret",
        "location": "gke-kubeconfig",
    }
    facts = json.loads(clusters["eks"]["metadata"]["annotations"][WORKER_FACTS_ANNOTATION])
    assert facts["cloud"] == "aws" and facts["kueueVersion"] == "0.19.2" and facts["role"] == "worker"
    (check,) = by_kind["AdmissionCheck"]
    assert check["spec"]["controllerName"] == "kueue.x-k8s.io/multikueue"
    assert check["spec"]["parameters"]["name"] == config["metadata"]["name"]
    for cq in by_kind["ClusterQueue"]:
        assert cq["spec"]["admissionChecksStrategy"]["admissionChecks"] == [{"name": check["metadata"]["name"]}]
        # one cohort, so quota the workers' queues lend each other is reachable from the manager too
        assert cq["spec"]["cohortName"] == "fleet" and cq["spec"]["preemption"] == {
            "reclaimWithinCohort": "Any",
            "withinClusterQueue": "LowerPriority",
        }  # priorities preempt where jobs wait
    secrets = {r.name: r for r in recording("fleet").resources if r.type == "kubernetes:core/v1:Secret"}
    assert {s.inputs["metadata"]["name"] for s in secrets.values()} == {"gke-kubeconfig", "eks-kubeconfig"}
    for s in secrets.values():
        assert s.inputs["metadata"]["namespace"] == "kueue-system"
        assert rpc.is_rpc_secret(s.inputs["stringData"])  # a Pulumi secret end to end


def test_kueue_manager_configuration_rendered_by_real_helm():
    stack = rendered("fleet")
    cm = stack.one("ConfigMap", release="fleet-kueue")
    config = yaml.safe_load(cm["data"]["controller_manager_config.yaml"])
    assert config["multiKueue"] == {
        "gcInterval": "60s",
        "origin": "multikueue",
        "workerLostTimeout": "900s",
        "dispatcherName": DISPATCHERS[next(iter(DISPATCHERS))],
    }
    worker = yaml.safe_load(
        rendered("fleet-gke").one("ConfigMap", release="kueue-chart")["data"]["controller_manager_config.yaml"]
    )
    assert config["integrations"] == worker["integrations"]  # the manager manages every kind the workers run


def test_trainjob_crd_on_the_manager_has_managed_by():
    crd = rendered("fleet").one("CustomResourceDefinition", "trainjobs.trainer.kubeflow.org")
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert "kueue.x-k8s.io/multikueue" in json.dumps(spec["managedBy"])


def test_fleet_runtimes_are_the_same_on_the_manager_and_every_worker():
    runtimes = {
        stack: {o["metadata"]["name"]: o for o in objects(stack, RUNTIME) if o["metadata"]["name"].startswith("fleet-")}
        for stack in ("fleet", "fleet-gke", "fleet-eks")
    }
    assert sorted(runtimes["fleet"]) == ["fleet-h100-80gb", "fleet-l4", "fleet-l40s"]
    assert sorted(runtimes["fleet-gke"]) == ["fleet-h100-80gb", "fleet-l4"]
    assert sorted(runtimes["fleet-eks"]) == ["fleet-h100-80gb", "fleet-l40s"]
    for worker in ("fleet-gke", "fleet-eks"):
        for name, obj in runtimes[worker].items():
            assert obj == runtimes["fleet"][name], name  # MultiKueue's Workload copy must match the worker's job
            assert schema_errors(obj) == []
    pod = runtimes["fleet"]["fleet-h100-80gb"]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"
    ]["spec"]
    assert pod["nodeSelector"] == {"gpu-cluster/fleet-gpu": "h100-80gb"}
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 8


@pytest.mark.parametrize("worker", ["fleet-gke", "fleet-eks"])
def test_worker_flavors_and_nodes_carry_the_fleet_gpu_label(worker):
    flavors = [o for o in objects(worker, CR_PREFIX) if o["kind"] == "ResourceFlavor"]
    assert flavors and all("gpu-cluster/fleet-gpu" in f["spec"]["nodeLabels"] for f in flavors)
    node_labels = [
        json.dumps(redact(r.inputs))
        for r in recording(worker).resources
        if r.type in ("gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup")
    ]
    assert sum('"gpu-cluster/fleet-gpu"' in n for n in node_labels) == 2  # both GPU pools, not the system pool


def test_standalone_examples_do_not_get_the_fleet_label():
    text = json.dumps([redact(r.inputs) for r in recording("gke-kueue").resources])
    assert "fleet-gpu" not in text


@pytest.mark.parametrize("worker", ["fleet-gke", "fleet-eks"])
def test_worker_rbac_covers_the_dispatched_kinds(worker):
    res = {
        r.type.split(":")[-1]: redact(r.inputs)
        for r in recording(worker).resources
        if r.type
        in (
            "kubernetes:core/v1:ServiceAccount",
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        )
    }
    rules: dict[tuple[str, str], set[str]] = {}  # in a mirrored namespace: the ClusterRole's reads + the Role's writes
    roles = [
        redact(r.inputs)
        for r in recording(worker).resources
        if r.type == "kubernetes:rbac.authorization.k8s.io/v1:Role" and r.name.startswith("fleet-worker-writer")
    ]
    assert roles, "no Role writing in the mirrored namespaces"
    for rule in [*res["ClusterRole"]["rules"], *roles[0]["rules"]]:
        for g in rule["apiGroups"]:
            for r in rule["resources"]:
                rules.setdefault((g, r), set()).update(rule["verbs"])
    for kind in (
        ("trainer.kubeflow.org", "trainjobs"),
        ("jobset.x-k8s.io", "jobsets"),
        ("batch", "jobs"),
        ("", "pods"),
    ):
        assert {"create", "delete", "get", "list", "watch"} <= rules[kind], kind
    assert {"get", "patch", "update"} <= rules[("kueue.x-k8s.io", "workloads/status")]
    assert res["ClusterRoleBinding"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "multikueue-sa", "namespace": "kueue-system"}
    ]
    (token,) = [
        redact(r.inputs)
        for r in recording(worker).resources
        if r.type == "kubernetes:core/v1:Secret" and r.inputs.get("type") == "kubernetes.io/service-account-token"
    ]
    assert token["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "multikueue-sa"}
    assert token["metadata"]["name"] == "multikueue-sa-token-1"


def test_every_kueue_integration_has_its_worker_rbac():
    from render.fleet_worker import KIND_OF_INTEGRATION
    from render.kueue_config import INTEGRATIONS

    assert set(INTEGRATIONS) == set(KIND_OF_INTEGRATION)  # a new integration needs its rule on the workers
