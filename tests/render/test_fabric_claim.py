"""Jobs on a GKE-managed fabric pool get the RDMA NICs through a DRA claim: the ResourceClaimTemplate (GKE's DRANET
guide: ``resource.k8s.io/v1``, DeviceClass ``mrdma.google.com``, every NIC: ``ExactCount`` 8, since Kueue refuses
``All``), one per namespace the pool's
jobs run in, and the runtime's pod that names it. Objects are parsed, and the template validates against the
Kubernetes 1.34 and 1.35 OpenAPI schemas (kubernetes-validate ships resource.k8s.io/v1 for both)."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from render.fabric_claim import (
    KUEUE_RESOURCE,
    claim_template,
    claim_templates,
    device_class,
    kueue_device_classes,
    pod_claim,
)
from render.fabric_pod import pod_fabric
from stacks.plan.kueue_topology import pool_namespaces
from render.kueue import render_kueue
from render.kueue_config import manager_config
from render.trainer import training_runtimes
from tests.support.kube.crd_schemas import cel_errors, schema_errors
from tests.support.spec.scheduling_fixtures import GKE_TEAMS, spec_and_facts

K8S_VERSIONS = ("1.34.0", "1.35.0")
"""Managed DRANET needs GKE ≥ 1.34.1-gke.1829001; 1.35 is the newest minor the checks target."""


def _ultra(mode: str) -> dict:
    raw = copy.deepcopy(GKE_TEAMS)
    raw["region"] = "us-east4"
    raw["nodePools"][0].update(name="h200", machineType="a3-ultragpu-8g", zones=["us-east4-b"], fabric={"mode": mode})
    raw["nodePools"][1]["zones"] = ["us-east4-a"]  # where the sources list g2-standard-24
    for queue in raw["scheduling"]["queues"]:
        queue["quotas"][0]["pool"] = "h200"
    return raw


MANAGED, ATTACHED = _ultra("managed"), _ultra("auto")


def _pod(raw: dict) -> dict:
    spec, facts = spec_and_facts(raw)
    runtime = {
        r["metadata"]["name"]: r for r in training_runtimes(facts, render_kueue(spec.scheduling, facts).placements)
    }["torch-h200"]
    template = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "job-node-0-0", **template.get("metadata", {})},
        "spec": template["spec"],
    }


def _templates(raw: dict) -> list[dict]:
    spec, facts = spec_and_facts(raw)
    return claim_templates(facts, pool_namespaces(spec.scheduling))


def test_one_template_per_team_namespace_with_quota_on_the_managed_pool():
    templates = _templates(MANAGED)
    assert [(t["metadata"]["namespace"], t["metadata"]["name"]) for t in templates] == [
        ("research", "rdma-h200"),
        ("product-ml", "rdma-h200"),
    ]
    (request,) = templates[0]["spec"]["spec"]["devices"]["requests"]
    assert templates[0]["apiVersion"] == "resource.k8s.io/v1"
    assert request["exactly"] == {"deviceClassName": "mrdma.google.com", "allocationMode": "ExactCount", "count": 8}
    assert templates[0]["metadata"]["labels"]["gpu-cluster/pool"] == "h200"


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_the_template_is_a_valid_resource_claim_template(version):
    for template in _templates(MANAGED):
        kubernetes_validate.validate(template, version, strict=True)


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_the_schema_check_can_fail(version):
    """A request without its ``exactly`` wrapper (the v1beta1 shape) is refused by the v1 schema."""
    bad = copy.deepcopy(_templates(MANAGED)[0])
    request = bad["spec"]["spec"]["devices"]["requests"][0]
    request.update(request.pop("exactly"))
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, version, strict=True)


def test_the_runtime_pod_names_the_template_and_its_container_holds_the_claim():
    pod = _pod(MANAGED)
    claims = {c["name"]: c["resourceClaimTemplateName"] for c in pod["spec"]["resourceClaims"]}
    assert claims == {"rdma": "rdma-h200"}
    (node,) = pod["spec"]["containers"]
    assert [c["name"] for c in node["resources"]["claims"]] == list(claims)
    assert node["resources"]["limits"] == {"nvidia.com/gpu": 8}
    env = {e["name"]: e["value"] for e in node["env"]}
    assert env["NCCL_NET"] == "gIB" and env["BASH_ENV"] == "/usr/local/gib/scripts/set_nccl_env.sh"
    assert not any(k.startswith("networking.gke.io/") for k in pod["metadata"].get("annotations", {})), (
        "managed networks have no Network objects to name: the NICs come through the claim"
    )
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(pod, version, strict=True)


def test_pools_whose_networks_gpu_cluster_attaches_claim_nothing():
    spec, facts = spec_and_facts(ATTACHED)
    assert device_class(facts[0]) is None and pod_claim(facts[0]) is None
    assert _templates(ATTACHED) == []
    assert "resourceClaims" not in _pod(ATTACHED)["spec"]
    fabric = pod_fabric(facts[0])
    assert fabric is not None and fabric.resource_claims == ()
    with pytest.raises(ValueError, match="no GKE-managed fabric"):
        claim_template(facts[0], "research")


def test_a_pool_no_queue_uses_gets_no_template():
    raw = copy.deepcopy(MANAGED)
    for queue in raw["scheduling"]["queues"]:
        queue["quotas"] = [q for q in queue["quotas"] if q["pool"] != "h200"]
    assert _templates(raw) == []


def test_kueue_charges_the_claimed_nics_against_quota_next_to_the_pools_gpus():
    """Kueue (≥ 0.18) counts DRA claims: the ClusterQueue covers the mapped NIC resource, with the NICs of the
    nodes the GPU quota buys on the managed pool and 0 on the others (every flavor of a group lists it)."""
    spec, facts = spec_and_facts(MANAGED)
    queues = {q["metadata"]["name"]: q for q in render_kueue(spec.scheduling, facts).cluster_queues}
    (group,) = queues["research"]["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["nvidia.com/gpu", KUEUE_RESOURCE]
    quotas = {f["name"].rsplit("-", 1)[0]: {r["name"]: r for r in f["resources"]} for f in group["flavors"]}
    assert quotas["h200"][KUEUE_RESOURCE] == {"name": KUEUE_RESOURCE, "nominalQuota": 24, "lendingLimit": 8}
    assert quotas["l4"][KUEUE_RESOURCE] == {"name": KUEUE_RESOURCE, "nominalQuota": 0}
    for queue in queues.values():
        assert schema_errors(queue) == [] and cel_errors(queue)[0] == [], queue["metadata"]["name"]
    config = manager_config(spec.scheduling, kueue_device_classes(facts))
    assert config["resources"]["deviceClassMappings"] == [
        {"name": KUEUE_RESOURCE, "deviceClassNames": ["mrdma.google.com"]}
    ]


def test_stacks_without_a_managed_pool_keep_gpu_only_quota_and_no_mappings():
    spec, facts = spec_and_facts(ATTACHED)
    assert kueue_device_classes(facts) == []
    assert "deviceClassMappings" not in manager_config(spec.scheduling, kueue_device_classes(facts))["resources"]
    for queue in render_kueue(spec.scheduling, facts).cluster_queues:
        assert queue["spec"]["resourceGroups"][0]["coveredResources"] == ["nvidia.com/gpu"]
