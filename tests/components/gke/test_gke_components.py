"""GKE cluster and GPU node pool: the provider inputs the program really sends (recorded under mocks)."""

from __future__ import annotations

import pytest

from preview.engine import run_program
from tests.support.spec.edit import edit, edits
from tests.support.preview.recorded import of_type, one, parent_of
from tests.support.spec.stack_configs import GKE

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"


@pytest.fixture(scope="module")
def rec():
    return run_program(GKE)


def test_gpu_pool_accelerators_taint_label_and_placement(rec):
    pool = one(rec, NODE_POOL, "h100")
    inputs = pool.inputs
    nc = inputs["nodeConfig"]
    assert nc["machineType"] == "a3-highgpu-8g"
    assert nc["guestAccelerators"] == [
        {"type": "nvidia-h100-80gb", "count": 8, "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"}}
    ]
    assert nc["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert nc["labels"] == {"gpu-cluster/pool": "h100"}
    assert inputs["placementPolicy"] == {"type": "COMPACT"}
    assert inputs["nodeLocations"] == ["us-central1-a"]
    assert inputs["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}
    assert inputs["initialNodeCount"] == 0 and "nodeCount" not in inputs
    assert pool.ignore_changes == ["initialNodeCount", "nodeCount"]
    assert "name" not in inputs, "the cloud name is auto-named so replacements can create before delete"


def test_gpu_pool_security_and_upgrade_settings(rec):
    inputs = one(rec, NODE_POOL, "h100").inputs
    nc = inputs["nodeConfig"]
    assert nc["shieldedInstanceConfig"] == {"enableSecureBoot": True, "enableIntegrityMonitoring": True}
    assert nc["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert nc["serviceAccount"] == "ml-h100@test-project-1.iam.gserviceaccount.com"
    assert nc["imageType"] == "COS_CONTAINERD" and nc["diskType"] == "hyperdisk-balanced"
    assert inputs["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert inputs["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}


def test_each_pool_has_a_dedicated_least_privilege_service_account(rec):
    accounts = {r.name: r.inputs["accountId"] for r in of_type(rec, "gcp:serviceaccount/account:Account")}
    assert accounts == {"h100-nodes-sa": "ml-h100", "ml-system-sa": "ml-system"}
    roles = sorted(
        r.inputs["role"] for r in of_type(rec, "gcp:projects/iAMMember:IAMMember") if r.name.startswith("h100-nodes")
    )
    assert roles == ["roles/artifactregistry.reader", "roles/container.defaultNodeServiceAccount"]


def test_cluster_secure_defaults(rec):
    cluster = one(rec, CLUSTER)
    c = cluster.inputs
    assert c["name"] == "ml" and c["location"] == "us-central1"
    assert c["removeDefaultNodePool"] is True and "nodePools" not in c
    assert c["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": False}
    assert c["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "authorized-0"}],
        "gcpPublicCidrsAccessEnabled": False,
    }
    assert c["workloadIdentityConfig"] == {"workloadPool": "test-project-1.svc.id.goog"}
    assert c["releaseChannel"] == {"channel": "REGULAR"}
    assert c["datapathProvider"] == "ADVANCED_DATAPATH"
    assert c["enableShieldedNodes"] is True and c["deletionProtection"] is True
    assert c["masterAuth"] == {"clientCertificateConfig": {"issueClientCertificate": False}}
    assert cluster.protect is True
    system = one(rec, NODE_POOL, "ml-system")
    assert system.inputs["nodeConfig"]["machineType"] == "e2-standard-4"
    assert "taints" not in system.inputs["nodeConfig"], "add-ons must be able to run on the system pool"


def test_parents_form_the_component_tree(rec):
    pool = one(rec, NODE_POOL, "h100")
    assert parent_of(rec, pool).type == "gpu-cluster:gcp:GkeGpuNodePool"
    assert parent_of(rec, one(rec, CLUSTER)).type == "gpu-cluster:gcp:GkeCluster"
    sa = one(rec, "gcp:serviceaccount/account:Account", "h100-nodes-sa")
    assert parent_of(rec, parent_of(rec, sa)).name == "h100"


def test_provider_carries_project_region_and_labels(rec):
    provider = one(rec, "pulumi:providers:gcp")
    assert provider.inputs["project"] == "test-project-1" and provider.inputs["region"] == "us-central1"
    assert '"team": "ml"' in provider.inputs["defaultLabels"]


def test_private_endpoint_when_no_authorized_networks():
    rec = run_program(edit(GKE, "cluster.authorizedNetworks", []))
    c = one(rec, CLUSTER).inputs
    assert c["privateClusterConfig"]["enablePrivateEndpoint"] is True
    assert c["masterAuthorizedNetworksConfig"] == {"cidrBlocks": [], "gcpPublicCidrsAccessEnabled": False}


@pytest.mark.parametrize(
    "capacity, expected_spot, expected_affinity",
    [
        ({"type": "spot"}, True, {"consumeReservationType": "NO_RESERVATION"}),
        (
            {"type": "reservation", "reservation": "res-a"},
            False,
            {
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name",
                "values": ["res-a"],
            },
        ),
        (
            {"type": "reservation", "reservation": "res-b", "reservationProject": "shared-proj"},
            False,
            {
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name",
                "values": ["projects/shared-proj/reservations/res-b"],
            },
        ),
        ({"type": "on-demand"}, False, None),
    ],
    ids=["spot", "reservation", "shared-reservation", "on-demand"],
)
def test_capacity_maps_to_spot_and_reservation_affinity(capacity, expected_spot, expected_affinity):
    rec = run_program(edit(GKE, "nodePools[0].capacity", capacity))
    nc = one(rec, NODE_POOL, "h100").inputs["nodeConfig"]
    assert nc["spot"] is expected_spot
    assert nc.get("reservationAffinity") == expected_affinity


def test_single_node_pool_spreads_over_zones_without_compact_placement():
    rec = run_program(
        edits(
            GKE,
            {
                "nodePools[0].machineType": "g2-standard-8",
                "nodePools[0].multiNode": False,
                "nodePools[0].minNodes": 3,
                "nodePools[0].maxNodes": 6,
                "nodePools[0].zones": ["us-central1-a", "us-central1-b"],
                "nodePools[0].labels": {"workload": "inference"},
                "nodePools[0].taints": [{"key": "dedicated", "value": "eval", "effect": "NoExecute"}],
            },
        )
    )
    inputs = one(rec, NODE_POOL, "h100").inputs
    assert "placementPolicy" not in inputs
    assert inputs["initialNodeCount"] == 2  # per zone: ceil(3 / 2)
    assert inputs["autoscaling"]["locationPolicy"] == "BALANCED"
    nc = inputs["nodeConfig"]
    assert nc["guestAccelerators"][0]["type"] == "nvidia-l4" and nc["guestAccelerators"][0]["count"] == 1
    assert nc["diskType"] == "pd-balanced"
    assert nc["labels"] == {"workload": "inference", "gpu-cluster/pool": "h100"}
    assert nc["taints"][1] == {"key": "dedicated", "value": "eval", "effect": "NO_EXECUTE"}


def test_n1_host_gets_the_attached_gpu():
    rec = run_program(
        edits(
            GKE,
            {
                "nodePools[0].machineType": "n1-standard-8",
                "nodePools[0].multiNode": False,
                "nodePools[0].accelerator": {"type": "nvidia-tesla-t4", "count": 2},
            },
        )
    )
    acc = one(rec, NODE_POOL, "h100").inputs["nodeConfig"]["guestAccelerators"]
    assert acc[0]["type"] == "nvidia-tesla-t4" and acc[0]["count"] == 2


def test_existing_cluster_is_looked_up_not_created():
    rec = run_program(edits(GKE, {"cluster.mode": "existing", "cluster.location": "us-central1-a"}))
    assert of_type(rec, CLUSTER) == []
    pool = one(rec, NODE_POOL, "h100")
    assert pool.inputs["cluster"] == "ml" and pool.inputs["location"] == "us-central1-a"
    assert one(rec, "pulumi:providers:kubernetes").inputs["kubeconfig"].count("203.0.113.20") == 1


def test_only_reservation_pools_delete_before_replace():
    reservation = {"type": "reservation", "reservation": "res-a"}
    reserved = one(run_program(edit(GKE, "nodePools[0].capacity", reservation)), NODE_POOL, "h100")
    on_demand = one(run_program(GKE), NODE_POOL, "h100")
    assert reserved.delete_before_replace is True
    assert on_demand.delete_before_replace is False


def test_cloud_nat_follows_the_network_choice():
    default_net = run_program(GKE)
    own_net = run_program(edits(GKE, {"cluster.network": "ml-vpc", "cluster.subnetwork": "ml-vpc-a"}))
    forced = run_program(
        edits(GKE, {"cluster.network": "ml-vpc", "cluster.subnetwork": "ml-vpc-a", "cluster.cloudNat": True})
    )
    nat = one(default_net, "gcp:compute/routerNat:RouterNat").inputs
    assert nat["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    assert one(default_net, "gcp:compute/router:Router").inputs["network"] == "default"
    assert of_type(own_net, "gcp:compute/routerNat:RouterNat") == []
    assert one(forced, "gcp:compute/router:Router").inputs["network"] == "ml-vpc"


def test_system_pool_starts_at_its_minimum():
    """initialNodeCount is per zone, so the regional system pool lists as many zones as minNodes."""
    one_node = one(run_program(GKE), NODE_POOL, "ml-system").inputs
    three_nodes = edit(GKE, "cluster.systemPool", {"minNodes": 3, "maxNodes": 6})
    three = one(run_program(three_nodes), NODE_POOL, "ml-system").inputs
    assert one_node["nodeLocations"] == ["us-central1-a"] and one_node["initialNodeCount"] == 1
    assert three["nodeLocations"] == ["us-central1-a", "us-central1-b", "us-central1-c"]
    assert three["autoscaling"]["totalMinNodeCount"] == 3 and three["autoscaling"]["totalMaxNodeCount"] == 6
