"""Topology rules: the recorded baseline passes; one field changed per case gives exactly one message."""

from __future__ import annotations

import pytest

from tests.support.spec.edit import DELETE, edit, edits
from tests.support.policy.harness import Pack, baseline, find, wire, with_props

NP, NG = "gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup"
LT, PG = "aws:ec2/launchTemplate:LaunchTemplate", "aws:ec2/placementGroup:PlacementGroup"
WAIVE = "or waive topology-multi-node-placement for this pool if it only runs single-node jobs"
EFA_FIX = (
    "Fix: attach one EFA interface per network card: networkCardIndex 0–31, deviceIndex 0 on card 0 and 1 on "
    "the others (gpu-cluster does this for multiNode: true pools)"
)


@pytest.fixture(scope="module")
def pack() -> Pack:
    p = Pack()
    p.configure()
    return p


def swap(resources, old, props):
    return [with_props(old, props) if r is old else r for r in resources]


@pytest.fixture
def gke():
    rs = baseline("gcp")
    return rs, find(rs, NP, "h100")


@pytest.fixture
def eks():
    rs = baseline("aws")
    return rs, find(rs, NG, "p5"), find(rs, LT, "p5-lt"), find(rs, PG, "p5-pg")


def test_gke_accelerator_count_must_match_the_machine(pack, gke):
    rs, pool = gke
    assert pack.resource(with_props(pool, edit(wire(pool), "nodeConfig.guestAccelerators[0].count", 4)), rs) == [
        (
            "topology-accelerator-count",
            "mandatory",
            "pool 'h100': the accelerators do not match the machine type a3-highgpu-8g · observed: guestAccelerators 4 × "
            "nvidia-h100-80gb · required: exactly 8 × nvidia-h100-80gb (catalog)\nFix: set the accelerator count to 8 (or "
            "omit "
            "accelerator and let gpu-cluster take it from the catalog), or pick a3-highgpu-4g for 4 × nvidia-h100-80gb",
        )
    ]
    assert pack.resource(with_props(pool, edit(wire(pool), "nodeConfig.guestAccelerators", [])), rs) == [
        (
            "topology-accelerator-count",
            "mandatory",
            "pool 'h100': the pool attaches no guest accelerator, but a3-highgpu-8g has 8 × nvidia-h100-80gb · observed: "
            "nodeConfig.guestAccelerators unset · required: exactly 8 × nvidia-h100-80gb (catalog)\nFix: set "
            "nodeConfig.guestAccelerators to [{type: nvidia-h100-80gb, count: 8}] "
            "(gpu-cluster takes it from the catalog)",
        )
    ]


def test_n1_attached_gpus_use_an_allowed_count(pack, gke):
    rs, pool = gke
    n1 = edits(
        wire(pool),
        {"nodeConfig.machineType": "n1-standard-8", "nodeConfig.guestAccelerators[0].type": "nvidia-tesla-t4"},
    )
    assert pack.resource(with_props(pool, n1), rs) == [
        (
            "topology-accelerator-count",
            "mandatory",
            "pool 'h100': the accelerator count cannot be attached to n1-standard-8 · observed: guestAccelerators 8 × "
            "nvidia-tesla-t4 · required: 1 / 2 / 4 per node\n"
            "Fix: set accelerator.count to an allowed count",
        )
    ]
    assert pack.resource(with_props(pool, edit(n1, "nodeConfig.guestAccelerators[0].count", 4)), rs) == []


def test_eks_instance_types_share_one_gpu_shape(pack, eks):
    rs, group, _, _ = eks
    mixed = edit(wire(group), "instanceTypes", ["p5.48xlarge", "p4de.24xlarge"])
    assert pack.resource(with_props(group, mixed), rs) == [
        (
            "topology-accelerator-count",
            "mandatory",
            "pool 'p5': its instance types have different GPUs per node · observed: instanceTypes p4de.24xlarge: 8 × "
            "A100_80GB; p5.48xlarge: 8 × H100_80GB · required: one GPU model and count per pool, so quotas, GRES and cost "
            "per node hold for every node\n"
            "Fix: split the node group into one pool per GPU shape",
        )
    ]


def test_gke_multi_node_pool_in_one_zone_with_compact_placement(pack, gke):
    rs, pool = gke
    two = edit(wire(pool), "nodeLocations", ["us-central1-a", "us-central1-b"])
    assert pack.stack(swap(rs, pool, two)) == [
        (
            "topology-multi-node-placement",
            "mandatory",
            "pool 'h100': this multi-node a3-highgpu-8g pool (up to 4 nodes) spans 2 zones · observed: nodeLocations "
            "us-central1-a and us-central1-b · required: exactly one zone (compact placement cannot span zones)\nFix: keep "
            "one zone (gpu-cluster: "
            f"zones: [us-central1-a] and multiNode: true), {WAIVE}",
        )
    ]
    loose = edit(wire(pool), "placementPolicy", DELETE)
    assert pack.stack(swap(rs, pool, loose)) == [
        (
            "topology-multi-node-placement",
            "mandatory",
            "pool 'h100': this a3-highgpu-8g pool (HGX-class with GPUDirect-TCPX, up to 4 nodes) has no compact "
            "placement · observed: placementPolicy.type unset · required: placementPolicy.type COMPACT, so nodes share a "
            "low-latency network block\nFix: set multiNode: true on the pool (gpu-cluster adds compact placement in one "
            "zone), "
            f"{WAIVE}",
        )
    ]
    both = edit(loose, "nodeLocations", ["us-central1-a", "us-central1-b"])
    assert pack.stack(swap(rs, pool, both)) == [
        (  # one finding, its fixes in the order they can be applied
            "topology-multi-node-placement",
            "mandatory",
            "pool 'h100': this a3-highgpu-8g pool (HGX-class with GPUDirect-TCPX, up to 4 nodes) spans 2 zones and has "
            "no compact placement · observed: nodeLocations us-central1-a and us-central1-b; placementPolicy.type unset · "
            "required: one zone and placementPolicy.type COMPACT (compact placement puts the nodes on one low-latency "
            "network block and cannot span zones)\nFix: first keep one zone (gpu-cluster: zones: [us-central1-a]), then "
            "set multiNode: true on "
            f"the pool (gpu-cluster adds compact placement), {WAIVE}",
        )
    ]


def test_small_or_partitioned_hgx_pools_are_not_multi_node(pack, gke):
    rs, pool = gke
    loose = edit(wire(pool), "placementPolicy", DELETE)
    assert pack.stack(swap(rs, pool, edit(loose, "autoscaling.totalMaxNodeCount", 3))) == []  # below minNodes 4
    mig = edit(loose, "nodeConfig.labels", {"gpu-cluster/pool": "h100", "nvidia.com/mig.config": "all-1g.10gb"})
    assert pack.stack(swap(rs, pool, mig)) == []
    pack.configure({"topology-multi-node-placement": {"minNodes": 5}})
    try:
        assert pack.stack(swap(rs, pool, loose)) == []
    finally:
        pack.configure()


def test_eks_multi_node_pool_in_one_az_with_a_cluster_placement_group(pack, eks):
    rs, group, template, placement = eks
    assert pack.stack(swap(rs, group, edit(wire(group), "subnetIds", ["subnet-1", "subnet-2"]))) == [
        (
            "topology-multi-node-placement",
            "mandatory",
            "pool 'p5': this multi-node p5.48xlarge pool (up to 2 nodes) spans Availability Zones · observed: 2 subnets "
            "in subnetIds · required: one subnet in one Availability Zone (a cluster placement group cannot span "
            "AZs)\nFix: keep one Availability Zone (gpu-cluster: one entry "
            f"in zones and multiNode: true), {WAIVE}",
        )
    ]
    assert pack.stack(swap(rs, template, edit(wire(template), "placement", DELETE))) == [
        (
            "topology-multi-node-placement",
            "mandatory",
            "pool 'p5': this multi-node p5.48xlarge pool (up to 2 nodes) has no cluster placement group · observed: "
            "launch template 'p5-lt' without placement.groupName · required: a launch template placing nodes in a "
            "placement group with strategy cluster\nFix: set multiNode: true on the pool (gpu-cluster creates the "
            "placement group and EFA "
            f"interfaces), {WAIVE}",
        )
    ]
    assert pack.stack(swap(rs, placement, edit(wire(placement), "strategy", "spread"))) == [
        (
            "topology-multi-node-placement",
            "mandatory",
            "pool 'p5': this multi-node p5.48xlarge pool (up to 2 nodes) uses a placement group that does not pack its "
            "nodes together · observed: placement group 'p5-pg' with strategy spread · required: strategy cluster (nodes "
            'packed close together for EFA)\nFix: set strategy "cluster" on the '
            "placement group",
        )
    ]


def test_eks_pool_in_two_azs_without_a_placement_group_gets_one_finding_with_ordered_fixes(pack, eks):
    rs, group, template, _ = eks
    two_azs = swap(rs, group, edit(wire(group), "subnetIds", ["subnet-1", "subnet-2"]))
    both = swap(two_azs, template, edit(wire(template), "placement", DELETE))
    assert pack.stack(both) == [
        (
            "topology-multi-node-placement",
            "mandatory",
            "pool 'p5': this multi-node p5.48xlarge pool (up to 2 nodes) spans Availability Zones, and has no cluster "
            "placement group · observed: 2 subnets in subnetIds; launch template 'p5-lt' without placement.groupName · "
            "required: one subnet in one Availability Zone (a cluster placement group cannot span AZs); a launch template "
            "placing nodes in a placement group with strategy cluster\nFix: first keep one Availability Zone (gpu-cluster: "
            "one entry in zones), then set multiNode: true "
            f"on the pool (gpu-cluster creates the placement group and EFA interfaces), {WAIVE}",
        )
    ]


def test_eks_multi_node_pool_has_every_efa_interface(pack, eks):
    rs, _, template, _ = eks
    props = wire(template)
    assert len(props["networkInterfaces"]) == 32  # the baseline really has them all
    one = edit(props, "networkInterfaces", props["networkInterfaces"][:1])
    assert pack.stack(swap(rs, template, one)) == [
        (
            "topology-efa-interfaces",
            "mandatory",
            "pool 'p5': multi-node p5.48xlarge pool leaves network cards without EFA, so NCCL traffic uses 1 of its 32 "
            "network cards · observed: 1 EFA interface in launch template 'p5-lt' · required: 32 EFA interfaces, one per "
            f"network card\n{EFA_FIX}",
        )
    ]
    shared = edit(props, "networkInterfaces[5].networkCardIndex", 4)
    assert pack.stack(swap(rs, template, shared)) == [
        (
            "topology-efa-interfaces",
            "mandatory",
            "pool 'p5': the 32 EFA interfaces of p5.48xlarge share network cards · observed: networkCardIndex in launch "
            f"template 'p5-lt': cards [4] have two interfaces, cards [5] none · required: cards 0–31, one interface each\n"
            f"{EFA_FIX}",
        )
    ]


def test_gpu_pools_carry_the_gpu_taint(pack, gke, eks):
    rs, pool = gke
    soft = edit(wire(pool), "nodeConfig.taints[0].effect", "PREFER_NO_SCHEDULE")
    assert pack.resource(with_props(pool, soft), rs) == [
        (
            "topology-gpu-taint",
            "mandatory",
            "pool 'h100': GPU nodes are not tainted nvidia.com/gpu:NoSchedule, so any pod can land on them · observed: "
            "taints: nvidia.com/gpu=present:PREFER_NO_SCHEDULE · required: a taint nvidia.com/gpu=present with effect "
            "NO_SCHEDULE\n"
            "Fix: add the taint {key: nvidia.com/gpu, value: present, effect: NO_SCHEDULE} (gpu-cluster pools carry it; "
            "remove any change that drops it)",
        )
    ]
    ers, group, _, _ = eks
    assert [
        d[2].split(" · required")[0] for d in pack.resource(with_props(group, edit(wire(group), "taints", [])), ers)
    ] == [
        "pool 'p5': GPU nodes are not tainted nvidia.com/gpu:NoSchedule, so any pod can land on them · observed: "
        "taints: none"
    ]


def test_compact_placement_pool_fits_one_placement_group(pack, gke):
    rs, pool = gke
    big = edit(wire(pool), "autoscaling.totalMaxNodeCount", 200)
    assert pack.resource(with_props(pool, big), rs) == [
        (
            "topology-compact-placement-size",
            "mandatory",
            "pool 'h100': the pool can grow past what one compact placement holds · observed: up to 200 nodes at max "
            "autoscale · required: at most 150 nodes per compact-placement pool, from maxNodes\nFix: split it into pools "
            "of at most 150 nodes, or lower maxNodes",
        )
    ]
    assert pack.resource(with_props(pool, edit(wire(pool), "autoscaling.totalMaxNodeCount", 150)), rs) == []


@pytest.mark.parametrize(
    "capacity",
    [
        {"type": "reservation", "reservation": "cr-0123456789abcdef0"},
        {"type": "reservation", "reservation": "cr-0123456789abcdef0", "reservationKind": "capacity-block"},
        {"type": "reservation", "reservation": "cr-0123456789abcdef0", "placementGroup": "p5-odcr-pg"},
    ],
    ids=["odcr", "capacity-block", "odcr-in-its-placement-group"],
)
def test_eks_reservation_pool_is_placed_by_its_reservation(pack, capacity):
    """No new placement group for reservation pools: compliant (the reservation decides where nodes go)."""
    from preview.engine import run_program
    from tests.support.spec.stack_configs import EKS

    rs = list(run_program(edit(EKS, "nodePools[0].capacity", capacity)).resources)
    assert find(rs, NG, "p5").inputs["capacityType"] in ("ON_DEMAND", "CAPACITY_BLOCK")
    assert [d for d in pack.stack(rs) if d[0] == "topology-multi-node-placement"] == []
    if capacity.get("reservationKind") is None and "placementGroup" not in capacity:
        template = find(rs, LT, "p5-lt")  # without the reservation target it is a plain on-demand pool again
        untargeted = swap(rs, template, edit(wire(template), "capacityReservationSpecification", DELETE))
        (diag,) = [d for d in pack.stack(untargeted) if d[0] == "topology-multi-node-placement"]
        assert diag[2].startswith(
            "pool 'p5': this multi-node p5.48xlarge pool (up to 2 nodes) has no cluster "
            "placement group · observed: launch template 'p5-lt' without placement.groupName"
        )


def test_each_topology_rule_is_waived_per_pool(pack, waived, gke, eks):
    rs, pool = gke
    ers, _, template, _ = eks

    def one(path, value):
        return lambda: pack.resource(with_props(pool, edit(wire(pool), path, value)), rs)

    single_efa = edit(wire(template), "networkInterfaces", wire(template)["networkInterfaces"][:1])
    cases = [
        ("topology-accelerator-count", "h100", one("nodeConfig.guestAccelerators[0].count", 4)),
        ("topology-gpu-taint", "h100", one("nodeConfig.taints[0].effect", "PREFER_NO_SCHEDULE")),
        ("topology-compact-placement-size", "h100", one("autoscaling.totalMaxNodeCount", 200)),
        (
            "topology-multi-node-placement",
            "h100",
            lambda: pack.stack(swap(rs, pool, edit(wire(pool), "nodeLocations", ["us-central1-a", "us-central1-b"]))),
        ),
        ("topology-efa-interfaces", "p5", lambda: pack.stack(swap(ers, template, single_efa))),
    ]
    for rule, name, run in cases:
        assert waived(pack, rule, name, run) == [], rule
