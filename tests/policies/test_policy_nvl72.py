"""The GB200 NVL72 rules on the recorded examples: topology-nvlink-domain (a 144-GPU gang on 72-GPU NVLink domains
without a topology level is a violation; required inside one domain it can never be admitted; an explicit block
level passes) and topology-arm64-images (an amd64-only or unknown image on an arm64 pool is a violation); and the
A4X example's cost rules fail closed until priceOverrides gives the reservation price."""

from __future__ import annotations

import copy

import pytest

from catalog.image_digests import DEPLOY_DIGEST
from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from tests.support.policy.harness import Pack, with_props, wire

NVLINK = "topology-nvlink-domain"
ARM = "topology-arm64-images"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


@pytest.fixture(scope="module")
def a4x():
    return tuple(run_program(read_stack_file(PROJECT_ROOT / "Pulumi.gke-a4x-nvl72.yaml"), "gke-a4x-nvl72").resources)


@pytest.fixture(scope="module")
def p6e():
    return tuple(run_program(read_stack_file(PROJECT_ROOT / "Pulumi.eks-p6e-gb200.yaml"), "eks-p6e-gb200").resources)


def _ours(diags, rule):
    return [d for d in diags if d[0] == rule]


def _runtime_edit(resources, nodes, annotation):
    """torch-gb200 with ``mlPolicy.numNodes`` and the pod template's topology annotation (None: removed)."""
    out = [copy.deepcopy(r) for r in resources]
    (runtime,) = [r for r in out if r.type == RUNTIME and r.inputs["metadata"]["name"] == "torch-gb200"]
    props = wire(runtime)
    props["spec"]["mlPolicy"]["numNodes"] = nodes
    meta = props["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]
    meta["annotations"].pop(REQUIRED)
    if annotation is not None:
        meta["annotations"][REQUIRED] = annotation
    return [with_props(r, props) if r is runtime else r for r in out]


def test_the_examples_pass_both_rules(pack, a4x, p6e):
    for recorded in (a4x, p6e):
        diags = pack.stack(list(copy.deepcopy(recorded)))
        assert _ours(diags, NVLINK) == [] and _ours(diags, ARM) == []


def test_a_144_gpu_gang_without_a_topology_level_is_a_violation(pack, a4x):
    (finding,) = _ours(pack.stack(_runtime_edit(a4x, 36, None)), NVLINK)
    assert finding[:2] == (NVLINK, "mandatory")
    assert finding[2].startswith(
        "training runtime 'torch-gb200': a 144-GPU gang on pool 'gb200' (72-GPU NVLink domains, one per "
        "cloud.google.com/gce-topology-subblock value) has no topology level, so its pods land on racks at random"
    )


def test_a_144_gpu_gang_required_inside_one_domain_is_never_admitted(pack, a4x):
    (finding,) = _ours(pack.stack(_runtime_edit(a4x, 36, "cloud.google.com/gce-topology-subblock")), NVLINK)
    assert "a 144-GPU gang is required inside one 72-GPU NVLink domain" in finding[2]


def test_a_144_gpu_gang_at_an_explicit_block_level_passes(pack, a4x):
    assert _ours(pack.stack(_runtime_edit(a4x, 36, "cloud.google.com/gce-topology-block")), NVLINK) == []


def test_a_gang_of_one_domain_without_a_level_may_straddle_racks(pack, a4x):
    (finding,) = _ours(pack.stack(_runtime_edit(a4x, 18, None)), NVLINK)
    assert "no topology level, so a gang that fits one domain may straddle racks" in finding[2]


def test_an_amd64_only_image_on_the_arm64_pool_is_a_violation(pack, a4x):
    out = [copy.deepcopy(r) for r in a4x]
    (runtime,) = [r for r in out if r.type == RUNTIME and r.name.endswith("torch-gb200")]
    props = wire(runtime)
    pod = props["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"][0]["image"] = "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime"
    (finding,) = _ours(pack.stack([with_props(r, props) if r is runtime else r for r in out]), ARM)
    assert finding[:2] == (ARM, "mandatory")
    assert finding[2].startswith(
        "ClusterTrainingRuntime 'kubeflow-runtime-torch-gb200': it runs on arm64 pool "
        "'gb200' (Grace arm64 hosts) images without an arm64 variant"
    )
    assert "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime (amd64 only:" in finding[2]


def test_an_unknown_image_on_the_arm64_pool_fails_closed(pack, p6e):
    out = [copy.deepcopy(r) for r in p6e]
    (release,) = [r for r in out if r.type == "kubernetes:helm.sh/v3:Release" and r.name == "slurm-slurm"]
    props = wire(release)
    props["values"]["nodesets"]["gb200"]["slurmd"]["image"] = {"repository": "example.com/slurmd", "tag": "1"}
    (finding,) = _ours(pack.stack([with_props(r, props) if r is release else r for r in out]), ARM)
    assert "images not in catalog/data/image-architectures.csv: example.com/slurmd:1" in finding[2]


def test_the_x86_gib_installer_on_the_arm64_pool_is_caught(pack, a4x):
    out = [copy.deepcopy(r) for r in a4x]
    (ds,) = [r for r in out if r.type == "kubernetes:apps/v1:DaemonSet" and "nccl-rdma-installer" in r.name]
    props = wire(ds)
    for c in props["spec"]["template"]["spec"]["initContainers"]:
        c["image"] = c["image"].replace("nccl-plugin-gib-arm64", "nccl-plugin-gib")
    (finding,) = _ours(pack.stack([with_props(r, props) if r is ds else r for r in out]), ARM)
    # pinned by the digest the registry returns at deploy: the tag's architectures are the catalog's
    assert f"nccl-plugin-gib:v1.1.0@{DEPLOY_DIGEST} (amd64 only" in finding[2]


def test_a4x_cost_rules_pass_with_a_contract_price(pack, a4x):
    price = {
        "machineType": "a4x-highgpu-4g",
        "capacity": "reservation",
        "usdPerNodeHour": 40.0,
        "asOf": "2026-11-01",
        "source": "reservation contract 2026",
    }
    assert {d[0] for d in pack.everything(list(copy.deepcopy(a4x))) if d[1] == "mandatory"} == {
        "cost-gpu-hour-limit",
        "cost-stack-budget",
    }
    pack.configure(
        {"cost-gpu-hour-limit": {"priceOverrides": [price]}, "cost-stack-budget": {"priceOverrides": [price]}}
    )
    try:
        assert [d for d in pack.everything(list(copy.deepcopy(a4x))) if d[1] == "mandatory"] == []
    finally:
        pack.configure()


def _eks_kueue(gfd: bool):
    cfg = read_stack_file(PROJECT_ROOT / "Pulumi.eks-p6e-gb200.yaml")
    cfg["gpu-cluster:nodePools"][0]["minNodes"] = 18  # Kueue TAS counts only nodes that exist
    cfg["gpu-cluster:nodePools"][0].pop("fabric")  # the slurmd-efa image is the Slurm form's; runtimes get the DLC
    cfg["gpu-cluster:scheduling"] = {
        "workload": "kubeflow",
        "queues": [{"name": "pretraining", "quotas": [{"pool": "gb200", "gpus": 72}]}],
        "topology": {"mode": "required", "level": "nvlink"},
    }
    cfg["gpu-cluster:gpuRuntime"]["gpuFeatureDiscovery"] = gfd
    return list(run_program(cfg, "eks-p6e-gb200").resources)


def test_eks_kueue_places_gangs_by_gfd_clique_and_needs_gfd(pack):
    resources = _eks_kueue(gfd=True)
    (topology,) = [r for r in resources if r.type.endswith(":Topology")]
    assert [lv["nodeLabel"] for lv in topology.inputs["spec"]["levels"]] == [
        "topology.kubernetes.io/zone",
        "nvidia.com/gpu.clique",
        "kubernetes.io/hostname",
    ]
    assert _ours(pack.stack(resources), "cross-layer-kueue-topology") == []
    (finding,) = _ours(pack.stack(_eks_kueue(gfd=False)), "cross-layer-kueue-topology")
    assert "spec.levels[1].nodeLabel nvidia.com/gpu.clique" in finding[2]
