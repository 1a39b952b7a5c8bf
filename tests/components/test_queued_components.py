"""Queued provisioning in the recorded resources (Pulumi mocks): the GKE flex-start node pool with the settings GKE
requires, the EKS Cluster Autoscaler with ProvisioningRequest support and its CRD (before the autoscaler and Kueue),
the queued node group's tag, and the Kueue objects created in reference order."""

from __future__ import annotations

import json

import pytest

from components.eks.cluster_autoscaler import provisioning_request_crd
from preview.engine import read_stack_file, run_program, stack_file
from tests.support.preview.recorded import of_type, one
from tests.support.spec.scheduling_fixtures import EKS_QUEUED, flat_config

NP = "gcp:container/nodePool:NodePool"
NG = "aws:eks/nodeGroup:NodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"


@pytest.fixture(scope="module")
def gke():
    return run_program(read_stack_file(stack_file("gke-flex-start-tas")), "gke-flex-start-tas")


@pytest.fixture(scope="module")
def eks():
    return run_program({"aws:region": "us-east-1", **flat_config(EKS_QUEUED)}, "eks-queued")


def test_gke_flex_start_node_pool_has_every_setting_gke_requires(gke):
    pool = one(gke, NP, "h100-flex").inputs
    assert pool["queuedProvisioning"] == {"enabled": True}
    node = pool["nodeConfig"]
    assert node["flexStart"] is True and node["maxRunDuration"] == "259200s"
    assert node["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert node["spot"] is False
    assert pool["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 8, "locationPolicy": "ANY"}
    assert pool["initialNodeCount"] == 0
    assert pool["management"] == {"autoRepair": False, "autoUpgrade": True}
    assert "placementPolicy" not in pool  # GKE refuses COMPACT on queued GPU pools
    assert pool["networkConfig"]["additionalNodeNetworkConfigs"]  # the TCPX fabric stays


def test_gke_on_demand_pools_keep_their_settings():
    rec = run_program(read_stack_file(stack_file("gke-kueue")), "gke-kueue")
    for pool in of_type(rec, NP):
        assert "queuedProvisioning" not in pool.inputs and "flexStart" not in pool.inputs["nodeConfig"]
        assert pool.inputs["management"]["autoRepair"] is True


def test_gke_kueue_objects_wait_for_what_they_name(gke):
    check = one(gke, KUEUE + "AdmissionCheck", "kueue-check-h100-flex-provisioning")
    config = one(gke, KUEUE + "ProvisioningRequestConfig", "kueue-prc-h100-flex-provisioning")
    assert config.urn in check.dependencies
    for cq in of_type(gke, KUEUE + "ClusterQueue"):
        assert check.urn in cq.dependencies, cq.name
    assert all("provisioningrequests" not in str(r.inputs) for r in of_type(gke, CONFIG_FILE))  # GKE ships it


def test_eks_autoscaler_serves_provisioning_requests_after_their_crd(eks):
    crd = one(eks, CONFIG_FILE, "cluster-autoscaler-provisioning-request-crd")
    assert crd.inputs == {"file": provisioning_request_crd("1.35.0")}
    assert crd.inputs["file"].startswith(
        "https://raw.githubusercontent.com/kubernetes/autoscaler/cluster-autoscaler-1.35.0/"
    )
    release = one(eks, RELEASE, "cluster-autoscaler")
    args = release.inputs["values"]["extraArgs"]
    assert args["enable-provisioning-requests"] is True and args["kube-api-content-type"] == "application/json"
    assert crd.urn in release.dependencies
    # Kueue looks for it at start: its namespace, the root its chart waits for, waits for the CRD
    assert crd.urn in one(eks, "kubernetes:core/v1:Namespace", "kueue-namespace").dependencies


def test_eks_queued_node_group_names_its_class_and_starts_at_zero(eks):
    group = one(eks, NG, "p5").inputs
    assert group["tags"]["gpu-cluster/queued-provisioning"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    assert group["scalingConfig"]["minSize"] == 0
    assert "gpu-cluster/queued-provisioning" not in one(eks, NG, "l40s").inputs["tags"]


def test_eks_without_queued_pools_keeps_the_autoscaler_flags_off():
    raw = json.loads(json.dumps(EKS_QUEUED))
    raw["nodePools"][0]["capacity"] = {}
    raw["scheduling"]["topology"] = {"mode": "preferred", "level": "block"}
    rec = run_program({"aws:region": "us-east-1", **flat_config(raw)}, "eks-plain")
    assert "enable-provisioning-requests" not in one(rec, RELEASE, "cluster-autoscaler").inputs["values"]["extraArgs"]
    assert of_type(rec, CONFIG_FILE) == []
