"""The Kueue/Trainer renderer: golden files for a GKE and an EKS spec, plus the facts each object must carry.

Golden files live in tests/render/golden/; after a deliberate change regenerate them with
``UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/render/test_kueue_render.py`` and review the diff.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from render.kueue import REPLACED_FIELDS, base_name, content_name, render_kueue
from render.kueue_config import manager_config, manager_config_yaml
from stacks.plan.kueue_topology import has_block_labels, placement
from render.trainer import training_runtimes
from catalog import Cloud
from tests.support.spec.edit import edit, edits
from tests.support.spec.scheduling_fixtures import EKS_TEAMS, GKE_TEAMS, spec_and_facts

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
    assert [f["metadata"]["name"].rsplit("-", 1)[0] for f in objects.flavors] == [p.name for p in facts]
    for flavor, pool in zip(objects.flavors, facts):
        assert flavor["spec"]["nodeLabels"] == {"gpu-cluster/pool": pool.name}
        assert flavor["spec"]["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
    (topology,) = objects.topologies
    assert topology["metadata"]["name"].startswith("gke-network-")  # fixed 4-node a3-highgpu-8g
    assert objects.flavors[0]["spec"]["topologyName"] == topology["metadata"]["name"]
    assert "topologyName" not in objects.flavors[1]["spec"]  # autoscaled L4: TAS would never scale it up


def test_cluster_queues_carry_quotas_limits_cohort_weight_and_preemption():
    spec, _, objects = _objects(GKE_TEAMS)
    research, product = objects.cluster_queues
    flavors = {f["name"].rsplit("-", 1)[0]: f["resources"][0] for f in research["spec"]["resourceGroups"][0]["flavors"]}
    assert [f["name"] for f in research["spec"]["resourceGroups"][0]["flavors"]] == [
        f["metadata"]["name"] for f in objects.flavors
    ]  # the queue names the flavor objects, hash and all
    assert flavors == {
        "h100": {"name": "nvidia.com/gpu", "nominalQuota": 24, "lendingLimit": 8},
        "l4": {"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 4},
    }
    assert research["spec"]["cohortName"] == "ml" and research["spec"]["fairSharing"] == {"weight": 2}
    assert research["spec"]["preemption"] == {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
    assert product["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "product-ml"}}
    assert objects.local_queues[1]["metadata"]["namespace"] == "product-ml"
    assert objects.local_queues[1]["spec"] == {"clusterQueue": "product"}
    assert objects.cohort["metadata"]["name"] == "ml"
    assert [(p["metadata"]["name"], p["value"]) for p in objects.priority_classes] == [
        ("production", 1000),
        ("preemptible", 10),
    ]


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
    raw = edit(GKE_TEAMS, "nodePools[1].gpuRuntime", {"sharing": {"mode": "time-slicing", "replicas": 4}})
    _, facts, objects = _objects(raw)
    l4 = {
        q["metadata"]["name"]: q["spec"]["resourceGroups"][0]["flavors"][1]["resources"][0]
        for q in objects.cluster_queues
    }
    assert l4["research"] == {"name": "nvidia.com/gpu", "nominalQuota": 16, "borrowingLimit": 16}
    assert [r["metadata"]["name"] for r in training_runtimes(facts, objects.placements)] == ["torch-h100"]


def test_gang_admission_and_fair_sharing_in_the_manager_configuration():
    spec, _, _ = _objects(GKE_TEAMS)
    config = manager_config(spec.scheduling)
    assert config["waitForPodsReady"]["timeout"] == "900s"
    assert config["fairSharing"] == {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
    assert "trainer.kubeflow.org/trainjob" in config["integrations"]["frameworks"]
    spec, _, _ = _objects(edit(GKE_TEAMS, "scheduling.gang", {"enabled": False}))
    assert "waitForPodsReady" not in manager_config(spec.scheduling)


def test_eks_topology_uses_the_network_layer_labels_eks_sets():
    _, _, objects = _objects(EKS_TEAMS)
    (topology,) = objects.topologies
    assert [lvl["nodeLabel"] for lvl in topology["spec"]["levels"]] == [
        "topology.kubernetes.io/zone",
        "topology.k8s.aws/network-node-layer-1",
        "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3",
        "kubernetes.io/hostname",
    ]
    assert objects.placements["p5"].annotation == (
        "kueue.x-k8s.io/podset-required-topology",
        "topology.k8s.aws/network-node-layer-2",
    )


def test_runtime_per_pool_pins_the_pool_and_carries_the_placement_annotation():
    spec, facts, objects = _objects(GKE_TEAMS)
    h100, l4 = training_runtimes(facts, objects.placements)
    pod = h100["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert (
        pod["metadata"]["annotations"]["kueue.x-k8s.io/podset-preferred-topology"]
        == "cloud.google.com/gce-topology-block"
    )  # beside the TCPX fabric's (tests/render/test_fabric_workloads.py)
    assert pod["spec"]["nodeSelector"] == {"gpu-cluster/pool": "h100"}
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 8}
    l4_pod = l4["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert "metadata" not in l4_pod and l4_pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 2}


@pytest.mark.parametrize(
    "cloud, machine, blocks",
    [
        (Cloud.GCP, "a3-megagpu-8g", True),
        (Cloud.GCP, "a3-highgpu-8g", True),
        (Cloud.GCP, "a3-highgpu-4g", False),
        (Cloud.GCP, "g2-standard-24", False),
        (Cloud.AWS, "p5.48xlarge", True),
        (Cloud.AWS, "p5.4xlarge", False),
        (Cloud.AWS, "g6e.12xlarge", True),
        (Cloud.AWS, "g5.48xlarge", False),
    ],
)
def test_which_machine_types_carry_block_labels(cloud, machine, blocks):
    assert has_block_labels(cloud, machine) is blocks


def test_a_pool_no_queue_uses_gets_a_plain_flavor_even_under_required_block():
    raw = edit(
        EKS_TEAMS,
        "nodePools",
        EKS_TEAMS["nodePools"]
        + [{"name": "g5", "machineType": "g5.12xlarge", "zones": ["us-east-1a"], "minNodes": 1, "maxNodes": 1}],
    )
    _, _, objects = _objects(raw)  # g5 has no block labels, but no quota: nothing to place
    g5 = next(f for f in objects.flavors if f["metadata"]["name"].startswith("g5-"))
    assert "topologyName" not in g5["spec"] and objects.placements["g5"].annotation is None


def test_placement_falls_back_to_zone_when_blocks_are_only_preferred():
    p = placement(Cloud.GCP, "l4", "g2-standard-24", 2, 2, "preferred", "block")
    assert (p.topology, p.annotation) == (
        "zone-host",
        ("kueue.x-k8s.io/podset-preferred-topology", "topology.kubernetes.io/zone"),
    )
    with pytest.raises(ValueError):
        placement(Cloud.GCP, "l4", "g2-standard-24", 2, 2, "required", "block")
    assert placement(Cloud.GCP, "h100", "a3-highgpu-8g", 4, 4, "none", "block").topology is None


def _names(objects) -> dict[tuple[str, str], str]:
    return {(o["kind"], base_name(o)): o["metadata"]["name"] for o in [*objects.topologies, *objects.flavors]}


def test_flavor_and_topology_names_change_exactly_when_a_field_that_replaces_them_changes():
    """Kueue keeps its resource-in-use finalizer on a referenced flavor or topology, so they are replaced under a new
    name (create, repoint, then delete) instead of deleted first: the name must follow the replacing fields."""
    _, _, base = _objects(GKE_TEAMS)
    before = _names(base)
    tainted = edit(GKE_TEAMS, "nodePools[1].taints", [{"key": "dedicated", "value": "eval", "effect": "NoSchedule"}])
    _, _, after = _objects(tainted)
    renamed = {k for k, v in _names(after).items() if before[k] != v}
    assert renamed == {("ResourceFlavor", "l4")}  # tolerations changed: only l4's flavor
    new_l4 = _names(after)[("ResourceFlavor", "l4")]
    assert all(
        f["name"] != before[("ResourceFlavor", "l4")]
        for cq in after.cluster_queues
        for f in cq["spec"]["resourceGroups"][0]["flavors"]
    )
    assert {f["name"] for f in after.cluster_queues[0]["spec"]["resourceGroups"][0]["flavors"]} >= {new_l4}

    unrelated = edits(
        GKE_TEAMS,
        {  # quotas, limits, weights, cohort, priorities, autoscaling: no rename
            "scheduling.queues[0].quotas[0].gpus": 16,
            "scheduling.queues[0].fairShareWeight": 7,
            "scheduling.cohort": "research-org",
            "scheduling.priorityClasses[0].value": 2000,
            "nodePools[1].maxNodes": 8,
        },
    )
    _, _, same = _objects(unrelated)
    assert _names(same) == before


def test_the_name_hash_covers_node_labels_tolerations_topology_and_levels_only():
    flavor = {
        "spec": {
            "nodeLabels": {"gpu-cluster/pool": "h100"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "topologyName": "gke-network-1",
        },
        "metadata": {"labels": {"a": "b"}},
    }
    name = content_name("h100", "ResourceFlavor", flavor)
    assert name.startswith("h100-") and len(name) == len("h100-") + 8
    for path, value in [
        ("spec.nodeLabels", {"gpu-cluster/pool": "h100", "zone": "a"}),
        ("spec.tolerations", []),
        ("spec.topologyName", "gke-network-2"),
        ("spec.nodeTaints", [{"key": "x", "effect": "NoSchedule"}]),
    ]:
        assert content_name("h100", "ResourceFlavor", edit(flavor, path, value)) != name, path
    relabelled = edit(flavor, "metadata.labels", {"team": "ml"})
    assert content_name("h100", "ResourceFlavor", relabelled) == name
    levels = {
        "spec": {"levels": [{"nodeLabel": "topology.kubernetes.io/zone"}, {"nodeLabel": "kubernetes.io/hostname"}]}
    }
    fewer = {"spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}}
    assert content_name("zone-host", "Topology", levels) != content_name("zone-host", "Topology", fewer)
    assert set(REPLACED_FIELDS) == {"ResourceFlavor", "Topology"}


def test_a_new_topology_renames_the_flavors_that_use_it():
    _, _, base = _objects(GKE_TEAMS)
    _, _, flat = _objects(edit(GKE_TEAMS, "scheduling.topology", {"mode": "none", "level": "block"}))
    assert not flat.topologies and "topologyName" not in flat.flavors[0]["spec"]
    assert flat.flavors[0]["metadata"]["name"] != base.flavors[0]["metadata"]["name"]  # h100 lost its topology
    assert flat.flavors[1]["metadata"]["name"] == base.flavors[1]["metadata"]["name"]  # l4 never had one
