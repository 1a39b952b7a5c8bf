"""The program registers the DRA claim templates of a GKE-managed fabric pool where its jobs run: in each team
namespace with quota on the pool (Kubeflow), after that namespace exists, or in the Slinky NodeSets' namespace
(Slurm), whose NodeSet pod and slurmd carry the claim; Kueue maps the claim's DeviceClass to a quota resource the
ClusterQueues cover. Recorded inputs validate against the Kubernetes 1.35 schema;
the NodeSet the chart renders validates against the NodeSet CRD and the pod schema."""

from __future__ import annotations

import jsonschema
import kubernetes_validate
import pytest
import yaml

from preview.engine import run_program
from preview.run import preview_config
from tests.components.gke.test_gke_fabric_managed import MANAGED
from tests.components.slurm.test_slurm_components import SLURM, _crd_schema, _defaults, _nodeset_cr
from tests.support.spec.edit import edit
from tests.support.kube.schema import unwrap_secrets
from tests.support.preview.recorded import of_type, one, parent_of

TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
NAMESPACE = "kubernetes:core/v1:Namespace"
RELEASE = "kubernetes:helm.sh/v3:Release"
K8S_VERSION = "1.35.0"
SLURM_MANAGED = edit(MANAGED, "gpu-cluster:scheduling.workload", "slurm")


@pytest.fixture(scope="module")
def rec():
    return run_program(MANAGED)


@pytest.fixture(scope="module")
def slurm_rec():
    return run_program(SLURM_MANAGED)


def test_the_template_is_registered_in_the_team_namespace_after_it(rec):
    template = one(rec, TEMPLATE, "fabric-claims-research-rdma-h200")
    assert parent_of(rec, template).type == "gpu-cluster:scheduling:FabricClaims"
    meta = template.inputs["metadata"]
    assert (meta["name"], meta["namespace"]) == ("rdma-h200", "research")
    (request,) = template.inputs["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"] == {"deviceClassName": "mrdma.google.com", "allocationMode": "ExactCount", "count": 8}
    namespace = one(rec, NAMESPACE, "kueue-ns-research")
    assert namespace.urn in template.dependencies, "the template waits for its namespace"
    kubernetes_validate.validate(unwrap_secrets(template.inputs), K8S_VERSION, strict=True)


def test_the_runtime_names_the_registered_template(rec):
    runtime = one(
        rec, "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime", "kubeflow-runtime-torch-h200"
    ).inputs
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "rdma", "resourceClaimTemplateName": "rdma-h200"}]
    assert pod["containers"][0]["resources"]["claims"] == [{"name": "rdma"}]


def test_stacks_without_a_managed_pool_register_no_template():
    auto = run_program(edit(MANAGED, "nodePools[0].fabric", {"mode": "auto"}))
    assert of_type(auto, TEMPLATE) == [] and of_type(auto, "gpu-cluster:scheduling:FabricClaims") == []


def test_slurm_gets_the_template_in_the_nodesets_namespace_and_the_nodeset_holds_the_claim(slurm_rec):
    template = one(slurm_rec, TEMPLATE, "fabric-claims-slurm-rdma-h200")
    assert template.inputs["metadata"]["namespace"] == "slurm"
    assert one(slurm_rec, NAMESPACE, "slurm-ns").urn in template.dependencies
    kubernetes_validate.validate(unwrap_secrets(template.inputs), K8S_VERSION, strict=True)
    nodeset = one(slurm_rec, RELEASE, "slurm-slurm").redacted_inputs["values"]["nodesets"]["h200"]
    cr = _nodeset_cr("h200", nodeset, _defaults(SLURM))
    jsonschema.validate(cr, _crd_schema("slinky.slurm.net_nodesets.yaml"))
    pod_spec = cr["spec"]["template"]["spec"]
    assert pod_spec["resourceClaims"] == [{"name": "rdma", "resourceClaimTemplateName": "rdma-h200"}]
    slurmd = cr["spec"]["slurmd"]
    assert slurmd["resources"]["claims"] == [{"name": "rdma"}], "job steps run in slurmd: it holds the NICs"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "h200-0"},
        "spec": {**pod_spec, "containers": [{**slurmd, "name": "slurmd"}]},
    }
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


def test_preview_shows_the_claim_each_managed_pool_wires_and_warns_no_more():
    report = preview_config("t", MANAGED)
    entry = {f["pool"]: f for f in report.as_dict()["fabric"]}["h200"]
    assert entry["draClaim"] == {
        "podClaim": "rdma",
        "template": "rdma-h200",
        "deviceClass": "mrdma.google.com",
        "allocationMode": "ExactCount",
        "count": 8,
        "namespaces": ["research"],
    }
    assert "DRA claim rdma: ResourceClaimTemplate rdma-h200 (8 × mrdma.google.com) in research" in entry["wired"]
    assert report.as_dict()["warnings"] == [], "the DRA-claim warning is gone now that the jobs are wired"


def test_kueue_maps_the_device_class_and_the_cluster_queue_gives_the_nics_quota(rec):
    """Without the mapping Kueue holds every TrainJob that claims the NICs as inadmissible."""
    values = one(rec, RELEASE, "kueue-chart").inputs["values"]
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["resources"]["deviceClassMappings"] == [
        {"name": "gpu-cluster/rdma-nics", "deviceClassNames": ["mrdma.google.com"]}
    ]
    queue = one(rec, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "kueue-cq-research").inputs
    (group,) = queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["nvidia.com/gpu", "gpu-cluster/rdma-nics"]
    (flavor,) = group["flavors"]
    assert {r["name"]: r["nominalQuota"] for r in flavor["resources"]} == {
        "nvidia.com/gpu": 8,
        "gpu-cluster/rdma-nics": 8,
    }
