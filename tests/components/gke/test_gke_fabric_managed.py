"""GKE-managed fabric (``fabric.mode: managed``) as the program registers it and the preview shows it: the node
pool asks GKE for accelerator networking (``acceleratorNetworkProfile: auto``, GKE's DRANET node label), gpu-cluster
creates no VPCs, subnets, firewall rules or Network/GKENetworkParamSet objects, the gIB installer still runs, the
runtime carries gIB but no multi-network annotations, and the fabric policies accept the pool."""

from __future__ import annotations

import json

import kubernetes_validate
import pytest

from preview.engine import run_program
from preview.run import preview_config
from tests.support.spec.edit import edits
from tests.support.kube.schema import K8S_VERSION
from tests.support.preview.recorded import of_type, one
from tests.support.spec.stack_configs import GKE

NODE_POOL, CLUSTER = "gcp:container/nodePool:NodePool", "gcp:container/cluster:Cluster"
CREATED = (
    "gcp:compute/network:Network",
    "gcp:compute/subnetwork:Subnetwork",
    "gcp:compute/firewall:Firewall",
    "kubernetes:networking.gke.io/v1:GKENetworkParamSet",
    "kubernetes:networking.gke.io/v1:Network",
)
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
MANAGED = edits(
    GKE,
    {
        "gpu-cluster:region": "us-east4",
        "nodePools[0].name": "h200",
        "nodePools[0].machineType": "a3-ultragpu-8g",
        "nodePools[0].zones": ["us-east4-b"],
        "nodePools[0].fabric": {"mode": "managed"},
        "gpu-cluster:scheduling": {
            "workload": "kubeflow",
            "queues": [{"name": "research", "quotas": [{"pool": "h200", "gpus": 8}]}],
        },
    },
)


@pytest.fixture(scope="module")
def rec():
    return run_program(MANAGED)


def test_the_pool_asks_gke_for_accelerator_networking_and_attaches_no_networks_of_its_own(rec):
    pool = one(rec, NODE_POOL, "h200").inputs
    assert pool["networkConfig"] == {"acceleratorNetworkProfile": "auto"}
    assert pool["nodeConfig"]["labels"]["cloud.google.com/gke-networking-dra-driver"] == "true"
    assert pool["nodeConfig"]["labels"]["gpu-cluster/pool"] == "h200"
    assert pool["nodeConfig"]["linuxNodeConfig"]["sysctls"]["net.ipv4.tcp_rmem"] == "4096 87380 16777216"
    for type_ in CREATED:
        assert of_type(rec, type_) == [], type_
    assert one(rec, CLUSTER).inputs["datapathProvider"] == "ADVANCED_DATAPATH", "managed DRANET needs Dataplane V2"


def test_the_gib_installer_still_runs_on_the_pool(rec):
    names = [r.inputs["metadata"]["name"] for r in of_type(rec, "kubernetes:apps/v1:DaemonSet")]
    assert "nccl-rdma-installer" in names


def test_the_runtime_carries_gib_but_no_interface_annotations(rec):
    runtime = one(rec, RUNTIME, "kubeflow-runtime-torch-h200").inputs
    template = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert "networking.gke.io/interfaces" not in json.dumps(template)
    node = template["spec"]["containers"][0]
    assert {e["name"]: e["value"] for e in node["env"]}["NCCL_NET"] == "gIB"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "n"}, "spec": template["spec"]}
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


def test_preview_says_the_pool_is_gke_managed_with_its_floor_unchecked_and_no_fabric_violation():
    report = preview_config("t", MANAGED)
    entry = {f["pool"]: f for f in report.as_dict()["fabric"]}["h200"]
    assert (entry["mode"], entry["status"], entry["networking"]) == (
        "managed",
        "managed",
        "GKE-managed (acceleratorNetworkProfile auto)",
    )
    assert entry["networks"] == [] and entry["createdByGpuCluster"] is False
    assert entry["gkeVersionFloor"] == "1.34.1-gke.1829001"
    assert entry["gkeVersionCheck"] == (
        "not checked: cluster.minMasterVersion is unset, so release channel REGULAR picks the version"
    )
    assert not [v for v in report.violations if str(v.get("policy", "")).startswith("topology-fabric")]


def test_a_pinned_version_is_checked_and_set_on_the_cluster():
    cfg = edits(MANAGED, {"gpu-cluster:cluster.minMasterVersion": "1.34.1-gke.1829001"})
    report = preview_config("t", cfg)
    entry = {f["pool"]: f for f in report.as_dict()["fabric"]}["h200"]
    assert entry["gkeVersionCheck"] == "minMasterVersion 1.34.1-gke.1829001 meets it"
    assert one(run_program(cfg), CLUSTER).inputs["minMasterVersion"] == "1.34.1-gke.1829001"
    assert "minMasterVersion" not in one(run_program(GKE), CLUSTER).inputs
