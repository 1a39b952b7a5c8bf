"""topology-fabric-missing: the recorded GKE baseline (a multi-node a3-highgpu-8g pool with its TCPX fabric)
passes; the same pool without its networks is a mandatory violation; GKE-managed accelerator networking passes; a
waiver silences one pool."""

from __future__ import annotations

import pytest

from tests.support.spec.edit import DELETE, edit
from tests.support.policy.harness import Pack, baseline, find, with_props, wire

NP = "gcp:container/nodePool:NodePool"
ID = "topology-fabric-missing"
MESSAGE = (
    "pool 'h100': this multi-node a3-highgpu-8g pool attaches {has} GPUDirect-TCPX networks, so NCCL between its "
    "nodes runs over the primary NIC and gives up 800 Gbps per node"
    " · observed: {networks} in networkConfig.additionalNodeNetworkConfigs, networkConfig.acceleratorNetworkProfile "
    "unset"
    " · required: 4 networks in networkConfig.additionalNodeNetworkConfigs, or networkConfig.acceleratorNetworkProfile "
    "auto\n"
    "Fix: remove `fabric: {{mode: off}}` from the pool (gpu-cluster then creates the networks, multi-networking, "
    "the NCCL plugin and wires the jobs), or attach your own with fabric mode existing; waive topology-fabric-missing "
    "for this pool only if it never runs jobs across nodes"
)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


@pytest.fixture
def gke():
    rs = baseline("gcp")
    return rs, find(rs, NP, "h100")


def _ours(diags):
    return [d for d in diags if d[0] == ID]


def test_the_baseline_with_its_fabric_passes(pack, gke):
    rs, pool = gke
    assert len(wire(pool)["networkConfig"]["additionalNodeNetworkConfigs"]) == 4
    assert _ours(pack.resource(pool, rs)) == []


def test_a_multi_node_pool_without_its_networks_is_a_mandatory_violation(pack, gke):
    rs, pool = gke
    bare = with_props(pool, edit(wire(pool), "networkConfig", DELETE))
    assert _ours(pack.resource(bare, rs)) == [(ID, "mandatory", MESSAGE.format(has="no", networks="no networks"))]


def test_too_few_networks_is_a_violation_naming_the_count(pack, gke):
    rs, pool = gke
    nets = wire(pool)["networkConfig"]["additionalNodeNetworkConfigs"][:2]
    short = with_props(pool, edit(wire(pool), "networkConfig.additionalNodeNetworkConfigs", nets))
    assert _ours(pack.resource(short, rs)) == [
        (ID, "mandatory", MESSAGE.format(has="2 of the 4", networks="2 networks"))
    ]


def test_gke_managed_accelerator_networking_passes(pack, gke):
    rs, pool = gke
    managed = with_props(pool, edit(wire(pool), "networkConfig", {"acceleratorNetworkProfile": "auto"}))
    assert _ours(pack.resource(managed, rs)) == []


def test_single_node_pools_are_not_applicable(pack, gke):
    rs, pool = gke
    single = edit(edit(wire(pool), "networkConfig", DELETE), "placementPolicy", DELETE)
    assert _ours(pack.resource(with_props(pool, single), rs)) == []


def test_a_waiver_silences_the_pool(pack, gke):
    rs, pool = gke
    bare = with_props(pool, edit(wire(pool), "networkConfig", DELETE))
    pack.configure({ID: {"waivers": [{"rule": ID, "resource": "h100", "reason": "single-node fine-tuning only"}]}})
    try:
        assert _ours(pack.resource(bare, rs)) == []
        assert (ID, "waived: pool 'h100' (single-node fine-tuning only)") in pack.not_applicable(bare, rs)
    finally:
        pack.configure()


SHAPE = "topology-fabric-shape"


def _shape(diags):
    return [d for d in diags if d[0] == SHAPE]


def test_the_baseline_has_the_machines_shape(pack, gke):
    rs, pool = gke
    assert _shape(pack.resource(pool, rs)) == []


def test_an_extra_network_is_a_shape_violation(pack, gke):
    rs, pool = gke
    nets = wire(pool)["networkConfig"]["additionalNodeNetworkConfigs"]
    extra = with_props(
        pool,
        edit(
            wire(pool),
            "networkConfig.additionalNodeNetworkConfigs",
            nets + [{"network": "extra", "subnetwork": "extra-sub"}],
        ),
    )
    assert _shape(pack.resource(extra, rs)) == [
        (
            SHAPE,
            "mandatory",
            (
                "pool 'h100': a3-highgpu-8g with GPUDirect-TCPX attaches 1 more network than it has NICs for"
                " · observed: 5 networks in networkConfig.additionalNodeNetworkConfigs"
                " · required: exactly 4 gVNIC networks, each its own VPC\n"
                "Fix: attach the networks gpu-cluster's fabric mode auto creates, or list them in this order with mode "
                "existing"
            ),
        )
    ]


def test_one_vpc_on_two_gvnic_nics_is_a_shape_violation(pack, gke):
    rs, pool = gke
    nets = wire(pool)["networkConfig"]["additionalNodeNetworkConfigs"]
    twice = [nets[0], nets[0], nets[2], nets[3]]
    bad = with_props(pool, edit(wire(pool), "networkConfig.additionalNodeNetworkConfigs", twice))
    assert _shape(pack.resource(bad, rs)) == [
        (
            SHAPE,
            "mandatory",
            (
                "pool 'h100': a3-highgpu-8g attaches one VPC to several gVNIC NICs, which breaks the per-NIC routing "
                "GPUDirect-TCPX expects"
                " · observed: networkConfig.additionalNodeNetworkConfigs lists ml-tcpx-vpc1 2 times"
                " · required: exactly 4 gVNIC networks, each its own VPC\n"
                "Fix: attach the networks gpu-cluster's fabric mode auto creates, or list them in this order with mode "
                "existing"
            ),
        )
    ]
