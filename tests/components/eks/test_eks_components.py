"""EKS cluster and GPU node group: the provider inputs the program really sends (recorded under mocks)."""

from __future__ import annotations

import json

import pytest

from preview.engine import run_program
from tests.support.spec.edit import edit, edits
from tests.support.preview.recorded import of_type, one, parent_of
from tests.support.spec.stack_configs import EKS

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


@pytest.fixture(scope="module")
def rec():
    return run_program(EKS)


def test_gpu_node_group_inputs(rec):
    ng = one(rec, NODE_GROUP, "p5")
    i = ng.inputs
    assert i["amiType"] == "AL2023_x86_64_NVIDIA" and i["instanceTypes"] == ["p5.48xlarge"]
    assert i["capacityType"] == "ON_DEMAND"
    assert i["scalingConfig"] == {"minSize": 0, "desiredSize": 0, "maxSize": 2}
    assert ng.ignore_changes == ["scalingConfig.desiredSize"]
    assert i["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert i["labels"] == {"gpu-cluster/pool": "p5", "k8s.amazonaws.com/accelerator": "nvidia-h100"}
    assert i["updateConfig"] == {"maxUnavailable": 1, "updateStrategy": "MINIMAL"}
    assert i["subnetIds"] == ["subnet-0123456789abcdef0"]
    assert i["launchTemplate"] == {"id": "p5-lt-id", "version": "1"}
    assert "nodeGroupName" not in i, "auto-named so replacements can create before delete"
    assert parent_of(rec, ng).type == "gpu-cluster:aws:EksGpuNodeGroup"


def test_multi_node_launch_template_has_every_efa_interface_and_a_placement_group(rec):
    lt = one(rec, LAUNCH_TEMPLATE, "p5-lt").inputs
    nics = lt["networkInterfaces"]
    assert len(nics) == 32, "p5.48xlarge has 32 network cards, one EFA each"
    assert [n["networkCardIndex"] for n in nics] == list(range(32))
    assert [n["deviceIndex"] for n in nics] == [0] + [1] * 31
    assert [n["interfaceType"] for n in nics] == ["efa"] + ["efa-only"] * 31, "only card 0 takes a subnet IP"
    assert nics[0]["securityGroups"] == ["sg-0offline0cluster0", "p5-efa-sg-id"]
    assert lt["placement"] == {"groupName": "p5-pg"}
    assert one(rec, "aws:ec2/placementGroup:PlacementGroup").inputs["strategy"] == "cluster"
    sg = one(rec, "aws:ec2/securityGroup:SecurityGroup").inputs
    assert sg["ingress"][0]["self"] is True and sg["ingress"][0]["protocol"] == "-1"


def test_every_launch_template_requires_imdsv2_and_encrypts_the_root_volume(rec):
    lts = of_type(rec, LAUNCH_TEMPLATE)
    assert {lt.name for lt in lts} == {"p5-lt", "ml-system-lt"}
    for lt in lts:
        assert lt.inputs["metadataOptions"] == {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": 1,
            "instanceMetadataTags": "disabled",
        }
        assert lt.inputs["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"


def test_cluster_secure_defaults(rec):
    cluster = one(rec, "aws:eks/cluster:Cluster")
    c = cluster.inputs
    assert c["name"] == "ml" and c["version"] == "1.35"
    assert c["enabledClusterLogTypes"] == ["api", "audit", "authenticator", "controllerManager", "scheduler"]
    assert c["encryptionConfig"]["resources"] == ["secrets"]
    assert c["encryptionConfig"]["provider"]["keyArn"].startswith("arn:")
    assert c["vpcConfig"] == {
        "subnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
        "endpointPrivateAccess": True,
        "endpointPublicAccess": False,
    }
    assert c["accessConfig"]["authenticationMode"] == "API"
    assert cluster.protect is True
    key = one(rec, "aws:kms/key:Key").inputs
    assert key["enableKeyRotation"] is True
    system = one(rec, NODE_GROUP, "ml-system").inputs
    assert system["amiType"] == "AL2023_x86_64_STANDARD" and "taints" not in system
    assert system["labels"] == {"gpu-cluster/node-role": "system"}


def test_node_role_has_only_the_documented_policies(rec):
    arns = sorted(
        r.inputs["policyArn"]
        for r in of_type(rec, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if r.name.startswith("ml-nodes")
    )
    assert arns == [
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    ]  # image pulls: test_cluster_access.py
    trust = json.loads(one(rec, "aws:iam/role:Role", "ml-nodes-role").inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}


def test_provider_pins_region_and_account(rec):
    p = one(rec, "pulumi:providers:aws").inputs
    assert p["region"] == "us-east-1" and json.loads(p["allowedAccountIds"]) == ["123456789012"]


def test_public_endpoint_only_for_authorized_networks():
    rec = run_program(edit(EKS, "cluster.authorizedNetworks", ["198.51.100.0/24"]))
    vpc = one(rec, "aws:eks/cluster:Cluster").inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is True and vpc["publicAccessCidrs"] == ["198.51.100.0/24"]


@pytest.mark.parametrize(
    "capacity, expected_type, lt_extra",
    [
        ({"type": "spot"}, "SPOT", {}),
        (
            {"type": "reservation", "reservation": "cr-0123456789abcdef0"},
            "ON_DEMAND",
            {
                "capacityReservationSpecification": {
                    "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}
                }
            },
        ),
        (
            {"type": "reservation", "reservation": "cr-0123456789abcdef0", "reservationKind": "capacity-block"},
            "CAPACITY_BLOCK",
            {
                "capacityReservationSpecification": {
                    "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}
                },
                "instanceMarketOptions": {"marketType": "capacity-block"},
            },
        ),
    ],
    ids=["spot", "odcr", "capacity-block"],
)
def test_capacity_types(capacity, expected_type, lt_extra):
    rec = run_program(edit(EKS, "nodePools[0].capacity", capacity))
    assert one(rec, NODE_GROUP, "p5").inputs["capacityType"] == expected_type
    lt = one(rec, LAUNCH_TEMPLATE, "p5-lt").inputs
    for key, value in lt_extra.items():
        assert lt[key] == value
    if not lt_extra:
        assert "capacityReservationSpecification" not in lt and "instanceMarketOptions" not in lt


def test_single_node_pool_has_no_efa_or_placement_group():
    rec = run_program(
        edits(
            EKS,
            {
                "nodePools[0].machineType": "g6e.xlarge",
                "nodePools[0].multiNode": False,
                "nodePools[0].zones": ["us-east-1a", "us-east-1b"],
            },
        )
    )
    lt = one(rec, LAUNCH_TEMPLATE, "p5-lt").inputs
    assert "networkInterfaces" not in lt and "placement" not in lt
    assert of_type(rec, "aws:ec2/placementGroup:PlacementGroup") == []
    assert one(rec, NODE_GROUP, "p5").inputs["subnetIds"] == ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]


def test_existing_cluster_is_looked_up_not_created():
    rec = run_program(edit(EKS, "cluster.mode", "existing"))
    assert of_type(rec, "aws:eks/cluster:Cluster") == [] and of_type(rec, "aws:kms/key:Key") == []
    lt = one(rec, LAUNCH_TEMPLATE, "p5-lt").inputs
    assert lt["networkInterfaces"][0]["securityGroups"][0] == "sg-0offline0existing"
    assert one(rec, NODE_GROUP, "p5").inputs["clusterName"] == "ml"


@pytest.mark.parametrize(
    "capacity",
    [
        {"type": "reservation", "reservation": "cr-0123456789abcdef0"},
        {"type": "reservation", "reservation": "cr-0123456789abcdef0", "reservationKind": "capacity-block"},
    ],
    ids=["odcr", "capacity-block"],
)
def test_multi_node_reservation_pool_gets_no_new_placement_group(capacity):
    """A targeted ODCR serves only the placement group it was created in; a capacity block is placed already."""
    rec = run_program(edit(EKS, "nodePools[0].capacity", capacity))
    assert of_type(rec, "aws:ec2/placementGroup:PlacementGroup") == []
    lt = one(rec, LAUNCH_TEMPLATE, "p5-lt").inputs
    assert "placement" not in lt
    assert len(lt["networkInterfaces"]) == 32, "EFA stays"


def test_odcr_launches_into_the_placement_group_it_was_created_in():
    rec = run_program(
        edit(
            EKS,
            "nodePools[0].capacity",
            {"type": "reservation", "reservation": "cr-0123456789abcdef0", "placementGroup": "p5-odcr-pg"},
        )
    )
    assert of_type(rec, "aws:ec2/placementGroup:PlacementGroup") == []
    lt = one(rec, LAUNCH_TEMPLATE, "p5-lt").inputs
    assert lt["placement"] == {"groupName": "p5-odcr-pg"}
    assert lt["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}
    }


@pytest.mark.parametrize(
    "upgrade, expected",
    [
        ({"maxSurge": 0, "maxUnavailable": 3}, {"maxUnavailable": 3, "updateStrategy": "MINIMAL"}),
        ({"maxSurge": 2, "maxUnavailable": 1}, {"maxUnavailable": 1, "updateStrategy": "DEFAULT"}),
    ],
    ids=["no-surge-minimal", "surge-default"],
)
def test_upgrade_settings_map_to_eks_update_config(upgrade, expected):
    """maxUnavailable as written (no silent 0 -> 1); maxSurge decides whether EKS launches new nodes first."""
    rec = run_program(edit(EKS, "nodePools[0].upgrade", upgrade))
    assert one(rec, NODE_GROUP, "p5").inputs["updateConfig"] == expected
