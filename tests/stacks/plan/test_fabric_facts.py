"""Derived fabric facts on PoolFacts: auto gives multi-node fabric-capable pools their fabric and single-node pools
none; off gives none; existing keeps the user's networks in NIC order; names follow GKE's guides."""

from __future__ import annotations

import copy

from catalog import load_catalog
from catalog.fabric import FabricKind
from stacks.plan.facts import pool_facts
from stacks.spec.fabric import FabricMode
from stacks.validate.load import load_spec

GKE = {
    "cloud": "gcp",
    "region": "us-east4",
    "project": "ml-project-1",
    "cluster": {"name": "ml"},
    "nodePools": [
        {"name": "mega", "machineType": "a3-megagpu-8g", "zones": ["us-east4-a"], "maxNodes": 4, "multiNode": True}
    ],
}


def facts(**pool):
    raw = copy.deepcopy(GKE)
    raw["nodePools"][0].update(pool)
    spec, _ = load_spec(raw)
    return pool_facts(spec, spec.node_pools[0], load_catalog())


def test_auto_multi_node_tcpxo_gets_eight_gvnic_networks_named_as_gke_guides():
    fabric = facts().fabric
    assert fabric is not None and fabric.kind == FabricKind.TCPXO and fabric.mode == FabricMode.AUTO
    assert [(n.k8s_name, n.interface, n.device_mode) for n in fabric.networks] == [
        (f"vpc{i}", f"eth{i}", "NetDevice") for i in range(1, 9)
    ]
    assert fabric.creates_networks and fabric.gpu_nics == 8
    assert fabric.machine.nominal_gbps_per_node == 1600


def test_rdma_gets_one_gvnic_and_eight_rdma_networks():
    fabric = facts(name="h200", machineType="a3-ultragpu-8g", zones=["us-east4-b"]).fabric
    assert [(n.k8s_name, n.interface, n.device_mode) for n in fabric.networks] == [
        ("gvnic-1", "eth1", "NetDevice"),
        *((f"rdma-{i}", f"eth{i + 2}", "RDMA") for i in range(8)),
    ]


def test_single_node_and_off_get_no_fabric():
    assert facts(multiNode=False).fabric is None
    assert facts(fabric={"mode": "off"}).fabric is None
    assert facts(machineType="g2-standard-24", multiNode=False).fabric is None


def test_existing_keeps_the_users_networks_in_nic_order():
    given = [{"network": f"gpu-net-{i}", "subnetwork": f"gpu-sub-{i}"} for i in range(8)]
    fabric = facts(fabric={"mode": "existing", "networks": given}).fabric
    assert not fabric.creates_networks
    assert [(n.k8s_name, n.network, n.subnetwork) for n in fabric.networks] == [
        (f"vpc{i + 1}", f"gpu-net-{i}", f"gpu-sub-{i}") for i in range(8)
    ]


def test_eks_fabric_is_efa_with_the_machines_interfaces_and_no_networks():
    raw = {
        "cloud": "aws",
        "region": "us-east-1",
        "cluster": {
            "name": "ml",
            "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
        },
        "nodePools": [
            {"name": "p5", "machineType": "p5.48xlarge", "zones": ["us-east-1a"], "maxNodes": 2, "multiNode": True}
        ],
    }
    spec, _ = load_spec(raw)
    fabric = pool_facts(spec, spec.node_pools[0], load_catalog()).fabric
    assert fabric.kind == FabricKind.EFA and fabric.gpu_nics == 32 and fabric.networks == ()
