"""The Kueue/Trainer renderer: golden files for a GKE and an EKS spec, plus the facts each object must carry.

Golden files live in tests/golden/; after a deliberate change regenerate them with
``UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_kueue_render.py`` and review the diff.
"""
from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from scheduling.kueue import render_kueue
from scheduling.kueue_config import manager_config, manager_config_yaml
from scheduling.kueue_topology import has_block_labels, placement
from scheduling.trainer import training_runtimes
from catalog import Cloud
from tests.scheduling_fixtures import EKS_TEAMS, GKE_TEAMS, spec_and_facts

GOLDEN = Path(__file__).parent / "golden"


def _render(raw) -> str:
    spec, facts = spec_and_facts(raw)
    objects = render_kueue(spec.scheduling, facts)
    docs = [*objects.namespaces, *objects.custom_resources(), *training_runtimes(facts, objects.placements)]
    return yaml.safe_dump_all(docs, sort_keys=False) + "---\n" + manager_config_yaml(spec.scheduling)


@pytest.mark.parametrize("name, raw", [("kueue-gke", GKE_TEAMS), ("kueue-eks", EKS_TEAMS)])
def test_rendered_objects_match_golden(name, raw):
    path = GOLDEN / f"{name}.yaml"
    rendered = _render(raw)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(rendered, encoding="utf-8")
    assert rendered == path.read_text(encoding="utf-8"), f"{path.name} changed: review, then UPDATE_GOLDEN=1"


def test_rendering_is_deterministic():
    assert _render(GKE_TEAMS) == _render(copy.deepcopy(GKE_TEAMS))


def _objects(raw):
    spec, facts = spec_and_facts(raw)
    return spec, facts, render_kueue(spec.scheduling, facts)


def test_flavors_select_each_pool_by_its_label_and_tolerate_the_gpu_taint():
    _, facts, objects = _objects(GKE_TEAMS)
    assert [f["metadata"]["name"] for f in objects.flavors] == [p.name for p in facts]
    for flavor, pool in zip(objects.flavors, facts):
        assert flavor["spec"]["nodeLabels"] == {"gpu-cluster/pool": pool.name}
        assert flavor["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists",
                                                  "effect": "NoSchedule"}]
    assert objects.flavors[0]["spec"]["topologyName"] == "gke-network"  # fixed 4-node a3-highgpu-8g
    assert "topologyName" not in objects.flavors[1]["spec"]  # autoscaled L4: TAS would never scale it up


def test_cluster_queues_carry_quotas_limits_cohort_weight_and_preemption():
    spec, _, objects = _objects(GKE_TEAMS)
    research, product = objects.cluster_queues
    flavors = {f["name"]: f["resources"][0] for f in research["spec"]["resourceGroups"][0]["flavors"]}
    assert flavors == {"h100": {"name": "nvidia.com/gpu", "nominalQuota": 24, "lendingLimit": 8},
                       "l4": {"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 4}}
    assert research["spec"]["cohortName"] == "ml" and research["spec"]["fairSharing"] == {"weight": 2}
    assert research["spec"]["preemption"] == {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
    assert product["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "product-ml"}}
    assert objects.local_queues[1]["metadata"]["namespace"] == "product-ml"
    assert objects.local_queues[1]["spec"] == {"clusterQueue": "product"}
    assert objects.cohort["metadata"]["name"] == "ml"
    assert [(p["metadata"]["name"], p["value"]) for p in objects.priority_classes] == [
        ("production", 1000), ("preemptible", 10)]


def test_without_a_cohort_there_is_no_cohort_object_no_reclaim_and_no_fair_sharing():
    raw = copy.deepcopy(GKE_TEAMS)
    sched = raw["scheduling"]
    del sched["cohort"]
    for q in sched["queues"]:
        q.pop("fairShareWeight", None)
        for quota in q["quotas"]:
            quota.pop("borrowingLimit", None)
            quota.pop("lendingLimit", None)
    spec, _, objects = _objects(raw)
    assert objects.cohort is None
    for cq in objects.cluster_queues:
        assert "cohortName" not in cq["spec"] and "fairSharing" not in cq["spec"]
        assert cq["spec"]["preemption"] == {"withinClusterQueue": "LowerPriority"}
    assert "fairSharing" not in manager_config(spec.scheduling)


def test_shared_gpus_multiply_the_quota_by_the_slices_each_gpu_advertises():
    raw = copy.deepcopy(GKE_TEAMS)
    raw["nodePools"][1]["gpuRuntime"] = {"sharing": {"mode": "time-slicing", "replicas": 4}}
    _, facts, objects = _objects(raw)
    l4 = {q["metadata"]["name"]: q["spec"]["resourceGroups"][0]["flavors"][1]["resources"][0]
          for q in objects.cluster_queues}
    assert l4["research"] == {"name": "nvidia.com/gpu", "nominalQuota": 16, "borrowingLimit": 16}
    assert [r["metadata"]["name"] for r in training_runtimes(facts, objects.placements)] == ["torch-h100"]


def test_gang_admission_and_fair_sharing_in_the_manager_configuration():
    spec, _, _ = _objects(GKE_TEAMS)
    config = manager_config(spec.scheduling)
    assert config["waitForPodsReady"]["timeout"] == "900s"
    assert config["fairSharing"] == {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
    assert "trainer.kubeflow.org/trainjob" in config["integrations"]["frameworks"]
    raw = copy.deepcopy(GKE_TEAMS)
    raw["scheduling"]["gang"] = {"enabled": False}
    spec, _, _ = _objects(raw)
    assert "waitForPodsReady" not in manager_config(spec.scheduling)


def test_eks_topology_uses_the_network_layer_labels_eks_sets():
    _, _, objects = _objects(EKS_TEAMS)
    (topology,) = objects.topologies
    assert [lvl["nodeLabel"] for lvl in topology["spec"]["levels"]] == [
        "topology.kubernetes.io/zone", "topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3", "kubernetes.io/hostname"]
    assert objects.placements["p5"].annotation == ("kueue.x-k8s.io/podset-required-topology",
                                                   "topology.k8s.aws/network-node-layer-2")


def test_runtime_per_pool_pins_the_pool_and_carries_the_placement_annotation():
    spec, facts, objects = _objects(GKE_TEAMS)
    h100, l4 = training_runtimes(facts, objects.placements)
    pod = h100["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["metadata"]["annotations"] == {"kueue.x-k8s.io/podset-preferred-topology":
                                              "cloud.google.com/gce-topology-block"}
    assert pod["spec"]["nodeSelector"] == {"gpu-cluster/pool": "h100"}
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 8}
    l4_pod = l4["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert "metadata" not in l4_pod and l4_pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 2}


@pytest.mark.parametrize("cloud, machine, blocks", [
    (Cloud.GCP, "a3-megagpu-8g", True), (Cloud.GCP, "a3-highgpu-8g", True), (Cloud.GCP, "a3-highgpu-4g", False),
    (Cloud.GCP, "g2-standard-24", False), (Cloud.AWS, "p5.48xlarge", True), (Cloud.AWS, "p5.4xlarge", False),
    (Cloud.AWS, "g6e.12xlarge", True), (Cloud.AWS, "g5.48xlarge", False)])
def test_which_machine_types_carry_block_labels(cloud, machine, blocks):
    assert has_block_labels(cloud, machine) is blocks


def test_a_pool_no_queue_uses_gets_a_plain_flavor_even_under_required_block():
    raw = copy.deepcopy(EKS_TEAMS)
    raw["nodePools"].append({"name": "g5", "machineType": "g5.12xlarge", "zones": ["us-east-1a"], "minNodes": 1,
                             "maxNodes": 1})
    _, _, objects = _objects(raw)  # g5 has no block labels, but no quota: nothing to place
    g5 = next(f for f in objects.flavors if f["metadata"]["name"] == "g5")
    assert "topologyName" not in g5["spec"] and objects.placements["g5"].annotation is None


def test_placement_falls_back_to_zone_when_blocks_are_only_preferred():
    p = placement(Cloud.GCP, "l4", "g2-standard-24", 2, 2, "preferred", "block")
    assert (p.topology, p.annotation) == ("zone-host", ("kueue.x-k8s.io/podset-preferred-topology",
                                                        "topology.kubernetes.io/zone"))
    with pytest.raises(ValueError):
        placement(Cloud.GCP, "l4", "g2-standard-24", 2, 2, "required", "block")
    assert placement(Cloud.GCP, "h100", "a3-highgpu-8g", 4, 4, "none", "block").topology is None
