"""Jobs on GB200 NVL72 pools get their IMEX channel through an NVIDIA DRA driver ComputeDomain: one per team
namespace with quota on the pool (or the Slurm namespace), its channel template claimed by the torch-<pool> runtime's
pods and the NodeSet's slurmd, Kueue charging the claims; a job's own domain through job_objects. Objects validate
against the driver chart's ComputeDomain CRD, the Trainer v2.3 CRDs, and the Kubernetes 1.35
schema (the pod spec with resource.k8s.io claims)."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from render.compute_domain import (
    CHANNEL_DEVICE_CLASS,
    KUEUE_RESOURCE,
    POD_CLAIM,
    compute_domain,
    compute_domains,
    job_objects,
    pod_claim,
    uses_compute_domains,
)
from stacks.plan.kueue_topology import pool_namespaces
from render.kueue import render_kueue
from render.kueue_config import manager_config
from stacks.plan.slurm import plan_slurm
from render.slurm_values import slurm_values
from render.fabric_pod import pod_fabric
from render.trainer import training_runtimes
from tests.support.kube.crd_schemas import cel_errors, schema_errors
from tests.support.spec.scheduling_fixtures import spec_and_facts

A4X = {
    "cloud": "gcp",
    "project": "ml-research-prod",
    "region": "us-central1",
    "cluster": {"name": "gb200", "minMasterVersion": "1.35"},
    "nodePools": [
        {
            "name": "gb200",
            "machineType": "a4x-highgpu-4g",
            "zones": ["us-central1-a"],
            "minNodes": 36,
            "maxNodes": 36,
            "multiNode": True,
            "racks": 2,
            "capacity": {"type": "reservation", "reservation": "gb200-res", "reservationBlock": "block-1"},
        },
        {"name": "l4", "machineType": "g2-standard-24", "zones": ["us-central1-a"], "maxNodes": 2},
    ],
    "scheduling": {
        "workload": "kubeflow",
        "cohort": "ml",
        "queues": [
            {"name": "research", "quotas": [{"pool": "gb200", "gpus": 72, "borrowingLimit": 0}]},
            {"name": "product", "namespace": "product-ml", "quotas": [{"pool": "gb200", "gpus": 72}]},
        ],
        "topology": {"mode": "required", "level": "nvlink"},
    },
}


def _runtime(raw: dict, name: str = "torch-gb200") -> dict:
    spec, facts = spec_and_facts(raw)
    return {
        r["metadata"]["name"]: r for r in training_runtimes(facts, render_kueue(spec.scheduling, facts).placements)
    }[name]


def _pod_template(runtime: dict) -> dict:
    return runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]


def test_one_compute_domain_per_team_namespace_with_quota_on_the_rack_pool():
    spec, facts = spec_and_facts(A4X)
    gb200, l4 = facts
    assert uses_compute_domains(gb200) and not uses_compute_domains(l4)
    domains = compute_domains(facts, pool_namespaces(spec.scheduling))
    assert [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in domains] == [
        ("research", "gb200-imex"),
        ("product-ml", "gb200-imex"),
    ]
    assert domains[0]["spec"] == {
        "numNodes": 0,
        "channel": {"resourceClaimTemplate": {"name": "gb200-imex-channel"}, "allocationMode": "Single"},
    }


def test_compute_domains_validate_against_the_driver_crd():
    """The chart's only CEL rule is a transition rule (the spec is immutable), which needs an old object."""
    spec, facts = spec_and_facts(A4X)
    for domain in compute_domains(facts, pool_namespaces(spec.scheduling)):
        assert schema_errors(domain) == []
        assert cel_errors(domain) == ([], 0)


def test_the_crd_check_can_fail():
    _, facts = spec_and_facts(A4X)
    bad = compute_domain(facts[0], "research")
    bad["spec"]["channel"]["allocationMode"] = "Many"
    bad["spec"]["numNodes"] = -1
    assert len(schema_errors(bad)) == 2


@pytest.mark.slow
def test_the_runtime_pod_claims_the_channel_and_validates_against_kubernetes_and_trainer():
    runtime = _runtime(A4X)
    template = _pod_template(runtime)
    claims = {c["name"]: c["resourceClaimTemplateName"] for c in template["spec"]["resourceClaims"]}
    assert claims == {POD_CLAIM: "gb200-imex-channel"}
    (node,) = template["spec"]["containers"]
    assert [c["name"] for c in node["resources"]["claims"]] == [POD_CLAIM]
    assert node["resources"]["limits"]["nvidia.com/gpu"] == 4
    tolerations = template["spec"]["tolerations"]
    assert {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"} in tolerations
    assert (
        template["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"]
        == "cloud.google.com/gce-topology-subblock"
    )
    assert schema_errors(runtime) == []
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job-node-0-0"}, "spec": template["spec"]}
    kubernetes_validate.validate(pod, "1.35.0", strict=True)


def test_a_job_gets_its_own_domain_and_namespaced_runtime():
    spec, facts = spec_and_facts(A4X)
    runtime = _runtime(A4X)
    domain, own = job_objects(facts[0], runtime, "llama-70b", "research")
    assert domain["metadata"]["name"] == "llama-70b-imex" and domain["metadata"]["namespace"] == "research"
    assert own["kind"] == "TrainingRuntime" and own["metadata"]["name"] == "torch-gb200-llama-70b"
    assert {c["name"]: c["resourceClaimTemplateName"] for c in _pod_template(own)["spec"]["resourceClaims"]} == {
        POD_CLAIM: "llama-70b-imex-channel"
    }
    assert _pod_template(runtime)["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == "gb200-imex-channel"
    assert schema_errors(domain) == [] and schema_errors(own) == []


def test_job_objects_refuse_a_runtime_without_the_channel_claim():
    _, facts = spec_and_facts(A4X)
    runtime = copy.deepcopy(_runtime(A4X))
    del _pod_template(runtime)["spec"]["resourceClaims"]
    with pytest.raises(ValueError, match="claims no IMEX channel"):
        job_objects(facts[0], runtime, "x", "research")


def test_kueue_maps_the_channel_class_and_charges_one_channel_per_node():
    spec, facts = spec_and_facts(A4X)
    queues = {q["metadata"]["name"]: q for q in render_kueue(spec.scheduling, facts).cluster_queues}
    (group,) = queues["research"]["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["nvidia.com/gpu", KUEUE_RESOURCE]
    (flavor,) = group["flavors"]
    assert {r["name"]: r for r in flavor["resources"]}[KUEUE_RESOURCE] == {
        "name": KUEUE_RESOURCE,
        "nominalQuota": 18,
        "borrowingLimit": 0,
    }  # 72 GPUs = 18 pods = 18 channels
    mappings = manager_config(spec.scheduling, [CHANNEL_DEVICE_CLASS])["resources"]["deviceClassMappings"]
    assert mappings == [{"name": KUEUE_RESOURCE, "deviceClassNames": [CHANNEL_DEVICE_CLASS]}]


def test_slurm_nodesets_of_rack_pools_claim_the_channel():
    raw = copy.deepcopy(A4X)
    raw["scheduling"] = {
        "workload": "slurm",
        "queues": [{"name": "research", "quotas": [{"pool": "gb200", "gpus": 144}]}],
        "topology": {"mode": "required", "level": "nvlink"},
    }
    spec, facts = spec_and_facts(raw)
    plan = plan_slurm(spec.scheduling, facts)
    values = slurm_values(plan, "ml", fabrics={p.name: pod_fabric(p) for p in facts})
    nodeset = values["nodesets"]["gb200"]
    assert {"name": POD_CLAIM, "resourceClaimTemplateName": "gb200-imex-channel"} in nodeset["podSpec"][
        "resourceClaims"
    ]
    assert {"name": POD_CLAIM} in nodeset["slurmd"]["resources"]["claims"]
    assert plan.topology.blocks[0].block_size == 18 and plan.topology.blocks[0].blocks == ("gb200-b0", "gb200-b1")


def test_single_node_rack_pools_and_other_pools_claim_nothing():
    raw = copy.deepcopy(A4X)
    raw["nodePools"][0]["multiNode"] = False
    del raw["nodePools"][0]["racks"]  # no workload policy without multiNode, so one node pool of 36
    raw["scheduling"]["topology"] = {"mode": "preferred", "level": "block"}
    _, facts = spec_and_facts(raw)
    assert all(pod_claim(p) is None for p in facts)
    assert compute_domains(facts, {"gb200": ["research"]}) == []
