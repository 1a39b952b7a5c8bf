"""The GB200 NVL72 examples as the program registers them: the A4X node pool placed by a HIGH_THROUGHPUT 1x72
workload policy on a reservation block, the P6e-GB200 node group on an UltraServer capacity block with the AL2023 ARM
NVIDIA AMI, the NVIDIA DRA driver release (ComputeDomains only, kubelet plugin on the rack pools) rendered by real
Helm on the staged chart, and the ComputeDomains validated against that chart's CRD."""

from __future__ import annotations

import pytest

from catalog.image_digests import DEPLOY_DIGEST
from tests.support.kube.crd_schemas import schema_errors
from tests.support.spec.edit import edit
from tests.support.spec.gpu_runtime_matrix import config
from tests.support.helm.examples import problems, recording, rendered
from tests.support.preview.recorded import of_type, one
from preview.engine import run_program

NODE_POOL = "gcp:container/nodePool:NodePool"
POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
COMPUTE_DOMAIN = "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain"
ARM64 = {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"}


def test_each_a4x_rack_is_its_own_node_pool_of_18_placed_by_the_workload_policy_on_the_reservation_block():
    rec = recording("gke-a4x-nvl72")
    policy = one(rec, POLICY, "gb200-workload-policy")
    assert policy.inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "1x72"}
    pools = [p for p in of_type(rec, NODE_POOL) if p.name.startswith("gb200-rack")]
    # GKE gives a 1x72 workload-policy node pool one 18-node sub-block: two racks are two node pools
    assert sorted(p.name for p in pools) == ["gb200-rack-0", "gb200-rack-1"]
    assert all(p.name != "gb200" for p in of_type(rec, NODE_POOL))
    for pool in pools:
        assert pool.inputs["autoscaling"]["totalMaxNodeCount"] == 18
        assert pool.inputs["autoscaling"]["totalMinNodeCount"] == 18
        assert pool.inputs["placementPolicy"] == {"type": "COMPACT", "policyName": "gb200-workload-policy"}
        assert policy.urn in pool.dependencies
        node = pool.inputs["nodeConfig"]
        # one pool label over the racks: one Kueue flavor, queue and runtime span both
        assert node["labels"]["gpu-cluster/pool"] == "gb200"
        assert node["resourceLabels"]["gpu-cluster-reserved-nodes"] == "18"
        assert node["reservationAffinity"]["values"] == ["gb200-us-central1-a/reservationBlocks/gb200-block-1"]
        assert node["guestAccelerators"][0]["type"] == "nvidia-gb200" and node["diskType"] == "hyperdisk-balanced"
    flavors = of_type(rec, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    assert [f.inputs["spec"]["nodeLabels"] for f in flavors] == [{"gpu-cluster/pool": "gb200"}]


def test_a4x_gets_the_rdma_multi_networks_and_the_arm64_gib_installer():
    rec = recording("gke-a4x-nvl72")
    names = {r.inputs["metadata"]["name"] for r in of_type(rec, "kubernetes:networking.gke.io/v1:Network")}
    assert names == {"gvnic-1", "rdma-0", "rdma-1", "rdma-2", "rdma-3"}
    images = [
        c["image"]
        for r in rec.resources
        if r.type == "kubernetes:apps/v1:DaemonSet"
        for c in r.inputs["spec"]["template"]["spec"].get("initContainers", [])
        if "nccl-plugin-gib" in c["image"]
    ]
    assert images == [f"us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.0@{DEPLOY_DIGEST}"]


def test_a4x_pool_without_nvl72_multi_node_gets_no_workload_policy():
    cfg = edit(config("gke-a4x-nvl72"), "gpu-cluster:nodePools[0].multiNode", False)
    cfg = edit(cfg, "gpu-cluster:nodePools[0].racks", None)  # racks split only a workload-policy pool
    cfg = edit(cfg, "gpu-cluster:scheduling.topology", {"mode": "preferred", "level": "block"})
    rec = run_program(cfg, "gke-a4x-nvl72")
    assert of_type(rec, POLICY) == [] and of_type(rec, COMPUTE_DOMAIN) == []
    assert one(rec, NODE_POOL, "gb200").inputs.get("placementPolicy") is None


def test_p6e_node_group_runs_the_arm_nvidia_ami_on_the_ultraserver_block():
    rec = recording("eks-p6e-gb200")
    group = one(rec, NODE_GROUP, "gb200")
    assert group.inputs["amiType"] == "AL2023_ARM_64_NVIDIA"
    assert group.inputs["scalingConfig"] == {"minSize": 0.0, "maxSize": 18.0, "desiredSize": 0.0}
    assert group.inputs["tags"]["gpu-cluster/reserved-nodes"] == "18"
    template = one(rec, "aws:ec2/launchTemplate:LaunchTemplate", "gb200-lt")
    assert template.inputs["instanceMarketOptions"] == {"marketType": "capacity-block"}
    # card 0 ENA plus one efa-only per GPU's card pair (EC2 user guide, EFA configuration for P6e-GB200)
    assert [n["networkCardIndex"] for n in template.inputs["networkInterfaces"]] == [0, 1, 5, 9, 13]


@pytest.mark.parametrize("stack, root", [("gke-a4x-nvl72", "/home/kubernetes/bin/nvidia"), ("eks-p6e-gb200", None)])
def test_dra_driver_release_serves_compute_domains_only_on_the_rack_pools(stack, root):
    rec = recording(stack)
    release = one(rec, RELEASE, "nvidia-dra-driver")
    values = release.inputs["values"]
    assert values["resources"] == {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}
    assert values.get("nvidiaDriverRoot") == root
    terms = values["kubeletPlugin"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "gpu-cluster/pool", "operator": "In", "values": ["gb200"]}]}
    ]
    tolerations = values["kubeletPlugin"]["tolerations"]
    assert (ARM64 in tolerations) == (stack == "gke-a4x-nvl72")  # GKE taints Arm nodes; EKS does not
    assert release.inputs["chart"] == "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
    assert release.inputs["version"] == "0.4.0"


@pytest.mark.parametrize("stack", ["gke-a4x-nvl72", "eks-p6e-gb200"])
def test_real_helm_renders_the_driver_and_every_object_is_valid(stack):
    stack_render = rendered(stack)
    objs = stack_render.release("nvidia-dra-driver")
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objs}
    assert ("CustomResourceDefinition", "computedomains.resource.nvidia.com") in kinds
    assert ("DeviceClass", "compute-domain-default-channel.nvidia.com") in kinds
    plugin = stack_render.one("DaemonSet", release="nvidia-dra-driver")
    containers = {c["name"] for c in plugin["spec"]["template"]["spec"]["containers"]}
    assert containers == {"compute-domains"}, "GPU allocation stays with the device plugin"
    assert problems(stack_render) == []


@pytest.mark.parametrize("stack, namespace", [("gke-a4x-nvl72", "pretraining"), ("eks-p6e-gb200", "slurm")])
def test_compute_domains_wait_for_the_driver_and_validate_against_its_crd(stack, namespace):
    rec = recording(stack)
    (domain,) = of_type(rec, COMPUTE_DOMAIN)
    assert (domain.inputs["metadata"]["namespace"], domain.inputs["metadata"]["name"]) == (namespace, "gb200-imex")
    release = one(rec, RELEASE, "nvidia-dra-driver")
    assert release.urn in domain.dependencies
    assert schema_errors(domain.inputs) == []


def test_p6e_nodes_launch_in_the_local_zone_subnet_the_control_plane_never_gets():
    rec = recording("eks-p6e-gb200")
    group = one(rec, NODE_GROUP, "gb200")
    assert group.inputs["subnetIds"] == ["subnet-0a1b2c3d4e5f60003"]  # us-east-1-dfw-2a, cluster.nodeSubnets
    (cluster,) = of_type(rec, "aws:eks/cluster:Cluster")
    assert sorted(cluster.inputs["vpcConfig"]["subnetIds"]) == ["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"]


def test_p6e_block_start_brings_up_the_block_nodes_without_the_autoscaler():
    # the slurmd pods claim an IMEX channel; the autoscaler's AWS scale-from-zero template has no ResourceSlices
    rec = recording("eks-p6e-gb200")
    up = one(rec, "aws:autoscaling/schedule:Schedule", "gb200-scale-up")
    assert (up.inputs["minSize"], up.inputs["desiredCapacity"], up.inputs["maxSize"]) == (18, 18, 18)
    assert up.inputs["startTime"] == "2030-06-03T11:30:00Z"
    down = one(rec, "aws:autoscaling/schedule:Schedule", "gb200-scale-down")
    assert (down.inputs["minSize"], down.inputs["desiredCapacity"], down.inputs["maxSize"]) == (0, 0, 0)


def test_a_two_ultraserver_p6e_pool_is_one_node_group_per_block_each_targeting_its_block_id():
    blocks = ["cr-0123456789abcdef0", "cr-0123456789abcdef1"]
    cfg = edit(config("eks-p6e-gb200"), "gpu-cluster:nodePools[0].maxNodes", 36)
    cfg = edit(cfg, "gpu-cluster:nodePools[0].minNodes", 36)  # Slurm blocks over 2 UltraServers: every node up
    cfg = edit(cfg, "gpu-cluster:nodePools[0].capacity.upfrontFeeUsd", 511999.48)
    cfg = edit(cfg, "gpu-cluster:nodePools[0].capacity.reservations", blocks)
    cfg["gpu-cluster:scheduling"]["queues"][0]["quotas"][0]["gpus"] = 144
    del cfg["gpu-cluster:nodePools"][0]["capacity"]["reservation"]
    rec = run_program(cfg, "eks-p6e-gb200")
    lts = [r for r in of_type(rec, "aws:ec2/launchTemplate:LaunchTemplate") if r.inputs.get("networkInterfaces")]
    assert (
        sorted(
            lt.inputs["capacityReservationSpecification"]["capacityReservationTarget"]["capacityReservationId"]
            for lt in lts
        )
        == blocks
    )  # the EKS guide requires the block's ID: no resource-group target
    for i in range(2):
        group = one(rec, "aws:eks/nodeGroup:NodeGroup", f"gb200-us-{i}")
        assert group.inputs["scalingConfig"]["maxSize"] == 18 and group.inputs["capacityType"] == "CAPACITY_BLOCK"
        up = one(rec, "aws:autoscaling/schedule:Schedule", f"gb200-us-{i}-scale-up")
        assert (up.inputs["minSize"], up.inputs["desiredCapacity"]) == (18, 18)
    assert not [r for r in of_type(rec, "aws:eks/nodeGroup:NodeGroup") if r.name == "gb200"]
