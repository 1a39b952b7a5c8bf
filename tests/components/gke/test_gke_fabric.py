"""GKE GPU fabric as the program registers it (under mocks): networks, multi-networking, node pool NICs, the
Network/GKENetworkParamSet pairs, installer and injector DaemonSets. Built-in objects are validated with
kubernetes-validate; ``Network`` and ``GKENetworkParamSet`` (CRDs GKE installs, not in kubernetes-validate) against
a JSON schema written here from the GKE API reference ("Network" and "GKENetworkParamSet" in
cloud.google.com/kubernetes-engine/docs/reference/crds/network and .../gkenetworkparamset)."""

from __future__ import annotations

import jsonschema
import kubernetes_validate
import pytest

from catalog.fabric import FabricKind, load_fabric_catalog
from catalog.image_digests import DEPLOY_DIGEST
from components.gke.fabric_networks import ROCE_MTU_ALLOWED
from preview.engine import run_program
from tests.support.kube.schema import K8S_VERSION
from tests.support.spec.edit import edits
from tests.support.preview.recorded import of_type, one
from tests.support.spec.stack_configs import GKE

FAB = load_fabric_catalog()
NODE_POOL, CLUSTER = "gcp:container/nodePool:NodePool", "gcp:container/cluster:Cluster"
VPC, SUBNET, FIREWALL = (
    "gcp:compute/network:Network",
    "gcp:compute/subnetwork:Subnetwork",
    "gcp:compute/firewall:Firewall",
)
PARAMS, NETWORK = ("kubernetes:networking.gke.io/v1:GKENetworkParamSet", "kubernetes:networking.gke.io/v1:Network")
DAEMONSET = "kubernetes:apps/v1:DaemonSet"

_META = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "minLength": 1}}}
PARAM_SET_SCHEMA = {
    # GKENetworkParamSet (networking.gke.io/v1): spec.vpc and spec.vpcSubnet name the VPC and its subnet;
    # deviceMode is NetDevice or DPDK-VFIO, and RDMA for RoCE NICs (GKE API reference; GKE RDMA guide).
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "networking.gke.io/v1"},
        "kind": {"const": "GKENetworkParamSet"},
        "metadata": _META,
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["vpc", "vpcSubnet"],
            "properties": {
                "vpc": {"type": "string", "minLength": 1},
                "vpcSubnet": {"type": "string", "minLength": 1},
                "deviceMode": {"enum": ["NetDevice", "DPDK-VFIO", "RDMA"]},
                "podIPv4Ranges": {"type": "object"},
            },
        },
    },
}
NETWORK_SCHEMA = {
    # Network (networking.gke.io/v1): type L3 or Device; parametersRef points at a GKENetworkParamSet.
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "networking.gke.io/v1"},
        "kind": {"const": "Network"},
        "metadata": _META,
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["type"],
            "properties": {
                "type": {"enum": ["L3", "Device"]},
                "parametersRef": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["group", "kind", "name"],
                    "properties": {
                        "group": {"const": "networking.gke.io"},
                        "kind": {"const": "GKENetworkParamSet"},
                        "name": {"type": "string"},
                    },
                },
                "routes": {"type": "array"},
                "dnsConfig": {"type": "object"},
                "provider": {"type": "string"},
            },
        },
    },
}

RDMA = {"name": "h200", "machineType": "a3-ultragpu-8g", "zones": ["us-east4-b"]}


@pytest.fixture(scope="module")
def tcpx():
    return run_program(GKE)


@pytest.fixture(scope="module")
def rdma():
    cfg = edits(GKE, {f"nodePools[0].{key}": value for key, value in RDMA.items()})
    cfg["gpu-cluster:region"] = "us-east4"
    return run_program(cfg)


def test_tcpx_pool_gets_four_gvnic_vpcs_with_jumbo_frames_and_a_firewall(tcpx):
    vpcs = sorted(of_type(tcpx, VPC), key=lambda r: r.name)
    assert [v.inputs["name"] for v in vpcs] == [f"ml-tcpx-vpc{i}" for i in range(1, 5)]
    assert all(v.inputs["mtu"] == 8244 and v.inputs["autoCreateSubnetworks"] is False for v in vpcs)
    subnets = {s.inputs["name"]: s.inputs["ipCidrRange"] for s in of_type(tcpx, SUBNET)}
    assert subnets == {f"ml-tcpx-vpc{i}-sub": f"192.168.{16 * (i - 1)}.0/20" for i in range(1, 5)}
    rules = {f.inputs["network"]: f.inputs for f in of_type(tcpx, FIREWALL)}
    assert sorted(rules) == [f"ml-tcpx-vpc{i}" for i in range(1, 5)]
    assert rules["ml-tcpx-vpc2"]["sourceRanges"] == ["192.168.16.0/20"]
    assert rules["ml-tcpx-vpc2"]["direction"] == "INGRESS"


def test_cluster_has_multi_networking_and_the_pool_attaches_the_networks_in_nic_order(tcpx):
    assert one(tcpx, CLUSTER).inputs["enableMultiNetworking"] is True
    assert one(tcpx, CLUSTER).inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    nets = one(tcpx, NODE_POOL, "h100").inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    assert nets == [{"network": f"ml-tcpx-vpc{i}", "subnetwork": f"ml-tcpx-vpc{i}-sub"} for i in range(1, 5)]
    assert one(tcpx, NODE_POOL, "ml-system").inputs["nodeConfig"]["gvnic"] == {"enabled": True}


def test_one_param_set_and_network_per_extra_network_named_as_gkes_guides(tcpx):
    params = {r.inputs["metadata"]["name"]: r.inputs for r in of_type(tcpx, PARAMS)}
    networks = {r.inputs["metadata"]["name"]: r.inputs for r in of_type(tcpx, NETWORK)}
    assert sorted(params) == sorted(networks) == [f"vpc{i}" for i in range(1, 5)]
    assert params["vpc3"]["spec"] == {"vpc": "ml-tcpx-vpc3", "vpcSubnet": "ml-tcpx-vpc3-sub", "deviceMode": "NetDevice"}
    assert networks["vpc3"]["spec"] == {
        "type": "Device",
        "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": "vpc3"},
    }
    for obj in params.values():
        jsonschema.validate(obj, PARAM_SET_SCHEMA)
    for obj in networks.values():
        jsonschema.validate(obj, NETWORK_SCHEMA)


def test_the_schemas_have_teeth():
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {
                "apiVersion": "networking.gke.io/v1",
                "kind": "Network",
                "metadata": {"name": "x"},
                "spec": {"type": "Device", "parametersRef": {"name": "x"}},
            },
            NETWORK_SCHEMA,
        )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {
                "apiVersion": "networking.gke.io/v1",
                "kind": "GKENetworkParamSet",
                "metadata": {"name": "x"},
                "spec": {"vpc": "a", "vpcSubnet": "b", "deviceMode": "netdevice"},
            },
            PARAM_SET_SCHEMA,
        )


def _daemonsets(rec) -> dict[str, dict]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in of_type(rec, DAEMONSET)}


def _images(ds: dict) -> list[str]:
    spec = ds["spec"]["template"]["spec"]
    return [c["image"] for c in spec.get("initContainers", []) + spec["containers"]]


def test_tcpx_installer_injector_and_nccl_config_are_pinned_and_valid(tcpx):
    ds = _daemonsets(tcpx)
    assert sorted(ds) == ["device-injector", "nccl-tcpx-installer"]
    installer = ds["nccl-tcpx-installer"]
    # no public digest for this tag: resolved from the registry at deploy (DEPLOY_DIGEST offline)
    assert f"{FAB.image(FabricKind.TCPX, 'nccl-plugin').reference}@{DEPLOY_DIGEST}" in _images(installer)
    assert (
        f"us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9@{DEPLOY_DIGEST}"
        in _images(installer)
    )
    assert _images(ds["device-injector"]) == [
        "gcr.io/gke-release/nri-device-injector@sha256:6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970"
    ]
    for obj in ds.values():
        pod = obj["spec"]["template"]["spec"]
        assert obj["metadata"]["namespace"] == "kube-system" and pod["priorityClassName"] == "system-node-critical"
        assert pod["tolerations"] == [{"operator": "Exists"}]
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [{"matchExpressions": [{"key": "gpu-cluster/pool", "operator": "In", "values": ["h100"]}]}]
        assert all(":" in i or "@sha256:" in i for i in _images(obj)) and not any("latest" in i for i in _images(obj))
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    config = one(tcpx, "kubernetes:core/v1:ConfigMap", "fabric-nccl-config").inputs
    assert config["data"]["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] == "eth1,eth2,eth3,eth4"
    kubernetes_validate.validate(config, K8S_VERSION, strict=True)


def test_rdma_pool_gets_a_roce_vpc_from_the_zones_profile_with_eight_subnets(rdma):
    vpcs = {v.inputs["name"]: v.inputs for v in of_type(rdma, VPC)}
    assert sorted(vpcs) == ["ml-rdma-gvnic-1", "ml-rdma-roce"]
    roce = vpcs["ml-rdma-roce"]
    assert roce["networkProfile"] == "projects/test-project-1/global/networkProfiles/us-east4-b-vpc-roce"
    assert roce["routingMode"] == "REGIONAL"
    # cluster-toolkit gpu-rdma-vpc sets 8896 (the RDMA profile allows 1300-8896); unset, GCE gives 1460
    assert roce["mtu"] == 8896 == ROCE_MTU_ALLOWED[1] and ROCE_MTU_ALLOWED[0] <= roce["mtu"]
    rdma_subnets = sorted(
        s.inputs["ipCidrRange"] for s in of_type(rdma, SUBNET) if s.inputs["network"] == "fabric-rdma-roce-id"
    )
    assert len(rdma_subnets) == 8 and "192.168.128.0/21" in rdma_subnets and "192.168.184.0/21" in rdma_subnets
    nets = one(rdma, NODE_POOL, "h200").inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    assert [n["network"] for n in nets] == ["ml-rdma-gvnic-1"] + ["ml-rdma-roce"] * 8
    modes = {r.inputs["metadata"]["name"]: r.inputs["spec"]["deviceMode"] for r in of_type(rdma, PARAMS)}
    assert modes == {"gvnic-1": "NetDevice", **{f"rdma-{i}": "RDMA" for i in range(8)}}
    ds = _daemonsets(rdma)
    assert sorted(ds) == ["nccl-rdma-installer"], "gIB needs no device injector"
    assert f"us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.0@{DEPLOY_DIGEST}" in _images(
        ds["nccl-rdma-installer"]
    )
    kubernetes_validate.validate(ds["nccl-rdma-installer"], K8S_VERSION, strict=True)


def test_existing_networks_are_attached_by_name_and_nothing_is_created():
    given = [{"network": f"team-gpu-{i}", "subnetwork": f"team-gpu-{i}-sub"} for i in range(4)]
    rec = run_program(edits(GKE, {"nodePools[0].fabric": {"mode": "existing", "networks": given}}))
    assert of_type(rec, VPC) == [] and of_type(rec, SUBNET) == [] and of_type(rec, FIREWALL) == []
    nets = one(rec, NODE_POOL, "h100").inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    assert nets == [{"network": f"team-gpu-{i}", "subnetwork": f"team-gpu-{i}-sub"} for i in range(4)]
    assert {r.inputs["spec"]["vpc"] for r in of_type(rec, PARAMS)} == {f"team-gpu-{i}" for i in range(4)}


@pytest.mark.parametrize("pool", [{"multiNode": False}, {"fabric": {"mode": "off"}}], ids=["single-node", "off"])
def test_no_fabric_means_no_networks_no_multi_networking_no_daemonsets(pool):
    rec = run_program(edits(GKE, {f"nodePools[0].{key}": value for key, value in pool.items()}))
    assert of_type(rec, VPC) == [] and of_type(rec, PARAMS) == [] and _daemonsets(rec) == {}
    assert "enableMultiNetworking" not in one(rec, CLUSTER).inputs
    assert "networkConfig" not in one(rec, NODE_POOL, "h100").inputs
    assert "gvnic" not in one(rec, NODE_POOL, "ml-system").inputs["nodeConfig"]  # ForceNew: other clusters keep theirs
