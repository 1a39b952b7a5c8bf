"""GB200 NVL72 pools against their rules: whole racks (a partial rack is a warning), Kubernetes 1.34+ for
ComputeDomains on both clouds, reservationBlock only on GKE reservation pools, no user placement policy on A4X (its
workload policy is gpu-cluster's), and the nvlink topology level only on rack-scale pools."""

from __future__ import annotations

import copy

from preview.engine import PROJECT_ROOT, read_stack_file
from tests.support.spec.cases import errors_of, issues_of
from tests.support.spec.edit import edit

A4X = {
    k.removeprefix("gpu-cluster:"): v
    for k, v in read_stack_file(PROJECT_ROOT / "Pulumi.gke-a4x-nvl72.yaml").items()
    if k.startswith("gpu-cluster:")
}
P6E = {
    k.removeprefix("gpu-cluster:"): v
    for k, v in read_stack_file(PROJECT_ROOT / "Pulumi.eks-p6e-gb200.yaml").items()
    if k.startswith("gpu-cluster:")
}


def _messages(cfg):
    return [str(i) for i in issues_of(cfg)]


def test_the_examples_are_valid_with_only_the_known_warnings():
    assert [i.path for i in issues_of(copy.deepcopy(A4X)) if not i.warning] == []
    assert [i.path for i in issues_of(copy.deepcopy(P6E)) if not i.warning] == []


def test_a_36_node_a4x_pool_in_one_node_pool_is_refused_citing_the_sub_block_limit():
    # GKE gives a 1x72 workload-policy node pool one 18-node sub-block: the other 18 nodes never come up
    (err,) = errors_of(edit(A4X, "nodePools[0].racks", None))
    assert err.startswith(
        "error: gpu-cluster:nodePools[0].maxNodes: pool 'gb200': 36 nodes per GKE node pool under "
        "the 1x72 workload policy: a node pool placed by a 1x72 workload policy gets one "
        "18-instance sub-block (one GB200 NVL72 rack): it must be 18 nodes or less (source: GKE A4X "
        "guide, cloud.google.com/kubernetes-engine/docs/how-to/gpu-a4x"
    )
    assert "fix:      set racks: 2 (gpu-cluster creates one node pool per rack" in err
    (err,) = errors_of(
        edit(edit(edit(A4X, "nodePools[0].maxNodes", 54), "nodePools[0].minNodes", 54), "nodePools[0].racks", 2)
    )
    assert "27 nodes per GKE node pool" in err and "set racks: 3" in err


def test_racks_split_min_and_max_nodes_evenly_and_only_on_a4x_workload_policy_pools():
    err = errors_of(edit(A4X, "nodePools[0].minNodes", 35))[0]
    assert err.startswith(
        "error: gpu-cluster:nodePools[0].minNodes: pool 'gb200': minNodes is the total over the "
        "pool's 2 racks and must split evenly between them"
    )
    (err,) = errors_of(edit(A4X, "nodePools[0].capacity.reservedNodes", 35))
    assert err.startswith(
        "error: gpu-cluster:nodePools[0].capacity.reservedNodes: pool 'gb200': "
        "capacity.reservedNodes is the total over the pool's 2 racks"
    )
    assert any(
        "racks splits a GKE pool of rack-scale machines" in e for e in errors_of(edit(P6E, "nodePools[0].racks", 2))
    )
    cfg = copy.deepcopy(A4X)
    cfg["nodePools"].append(
        {
            "name": "l4",
            "machineType": "g2-standard-24",
            "zones": ["us-central1-a"],
            "minNodes": 2,
            "maxNodes": 2,
            "racks": 2,
        }
    )
    assert any("racks is for rack-scale NVLink machines" in e for e in errors_of(cfg))


def test_a_pool_that_does_not_fill_whole_racks_is_warned():
    cfg = edit(edit(edit(A4X, "nodePools[0].maxNodes", 40), "nodePools[0].minNodes", 40), "nodePools[0].racks", 4)
    (warning,) = [m for m in _messages(cfg) if "whole NVLink domains" in m]
    assert warning.splitlines()[0] == (
        "warning: gpu-cluster:nodePools[0].maxNodes: pool 'gb200': the pool does not "
        "fill whole NVLink domains (18 nodes each): 4 node(s) of a partial rack, and "
        "jobs that need a whole domain cannot use them"
    )
    assert "fix:      set maxNodes to 36 or 54" in warning


def test_compute_domains_need_kubernetes_1_34():
    (gke,) = errors_of(edit(A4X, "cluster.minMasterVersion", "1.33"))
    assert gke.startswith(
        "error: gpu-cluster:nodePools[0].machineType: pool 'gb200': a4x-highgpu-4g jobs need "
        "Kubernetes 1.34+ (DRA ComputeDomains, resource.k8s.io/v1)"
    )
    eks = [e for e in errors_of(edit(P6E, "cluster.kubernetesVersion", "1.33")) if "resource.k8s.io/v1" in e]
    assert len(eks) == 1 and "the cluster runs 1.33" in eks[0]
    assert any(
        "cluster.minMasterVersion is omitted" in m for m in _messages(edit(A4X, "cluster.minMasterVersion", None))
    )


def test_reservation_block_is_a_gke_reservation_setting_and_a4x_takes_no_placement_policy():
    assert any(
        "reservationBlock is a GKE setting" in e
        for e in errors_of(edit(P6E, "nodePools[0].capacity.reservationBlock", "b1"))
    )
    assert any(
        "give the block's name, not a path" in e
        for e in errors_of(edit(A4X, "nodePools[0].capacity.reservationBlock", "res/reservationBlocks/b1"))
    )
    (err,) = errors_of(edit(A4X, "nodePools[0].capacity.placementPolicy", "my-compact"))
    assert (
        "a4x-highgpu-4g pools get gpu-cluster's own workload policy (HIGH_THROUGHPUT, accelerator topology 1x72)" in err
    )


def test_the_nvlink_level_needs_rack_scale_pools():
    cfg = copy.deepcopy(A4X)
    cfg["nodePools"].append(
        {"name": "l4", "machineType": "g2-standard-24", "zones": ["us-central1-a"], "minNodes": 2, "maxNodes": 2}
    )
    cfg["scheduling"]["queues"][0]["quotas"].append({"pool": "l4", "gpus": 2})
    (err,) = errors_of(cfg)
    assert err.startswith(
        "error: gpu-cluster:scheduling.topology.level: nvlink placement needs rack-scale NVLink "
        "pools, and the NVLink domain of l4 (g2-standard-24) ends at the node"
    )


def test_a_p6e_pool_outside_the_dallas_local_zone_is_refused_citing_where_it_is_sold():
    cfg = edit(P6E, "nodePools[0].zones", ["us-east-1a"])
    (err,) = errors_of(cfg)
    assert err.startswith(
        "error: gpu-cluster:nodePools[0].zones[0]: pool 'gb200': p6e-gb200.36xlarge is not sold in "
        "us-east-1a: P6e-GB200 UltraServer Capacity Blocks are sold only in the Dallas Local Zone (opted in "
        "first), and instances launch only in the block's zone (source: EC2 user guide, Launch instances using "
        "Capacity Blocks (docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-launch.html"
    )
    assert "allowed:  us-east-1-dfw-2a" in err and "cluster.nodeSubnets.us-east-1-dfw-2a" in err


def test_a_local_zone_subnet_never_goes_to_the_control_plane():
    cfg = edit(
        P6E,
        "cluster.subnets",
        {
            "us-east-1a": "subnet-0a1b2c3d4e5f60001",
            "us-east-1b": "subnet-0a1b2c3d4e5f60002",
            "us-east-1-dfw-2a": "subnet-0a1b2c3d4e5f60003",
        },
    )
    del cfg["cluster"]["nodeSubnets"]
    err, pool_err = errors_of(cfg)
    assert err.startswith(
        "error: gpu-cluster:cluster.subnets.us-east-1-dfw-2a: a Local Zone subnet, and every "
        "cluster.subnets entry goes to the control plane: the EKS control plane runs only in the "
        "Region's Availability Zones"
    )
    assert "fix:      move it to cluster.nodeSubnets.us-east-1-dfw-2a (node groups only)" in err
    assert pool_err.startswith(
        "error: gpu-cluster:nodePools[0].zones[0]: pool 'gb200': a Local Zone needs a node subnet there"
    )


def test_a_dra_pool_that_can_only_start_by_scale_from_zero_is_refused_naming_the_autoscaler_limit():
    cfg = copy.deepcopy(P6E)
    del cfg["nodePools"][0]["capacity"]["window"]
    del cfg["nodePools"][0]["capacity"]["upfrontFeeUsd"]
    errors = errors_of(cfg)
    (err,) = [e for e in errors if "scale-from-zero" in e]
    assert err.startswith(
        "error: gpu-cluster:nodePools[0].minNodes: pool 'gb200': p6e-gb200.36xlarge jobs claim an "
        "IMEX channel (DRA ComputeDomain), and the pool can only start by scale-from-zero: the "
        "Cluster Autoscaler's AWS scale-from-zero node template carries no ResourceSlices"
    )
    assert "kubernetes/autoscaler#10277" in err and "fix:      declare capacity.window" in err
    # nodes that exist from the start need no scale-up
    cfg["nodePools"][0]["minNodes"] = 18
    assert not [e for e in errors_of(cfg) if "scale-from-zero" in e]


def _two_ultraservers(cfg):
    """Two UltraServers kept up for the block's length: a pool that follows the queue cannot keep two Slurm blocks."""
    cfg = edit(edit(cfg, "nodePools[0].maxNodes", 36), "nodePools[0].capacity.upfrontFeeUsd", 511999.48)
    cfg = edit(cfg, "nodePools[0].minNodes", 36)
    cfg["scheduling"]["queues"][0]["quotas"][0]["gpus"] = 144
    return cfg


BLOCKS = ["cr-0123456789abcdef0", "cr-0123456789abcdef1"]


def _two_blocks(cfg):
    cfg = edit(_two_ultraservers(cfg), "nodePools[0].capacity.reservations", BLOCKS)
    del cfg["nodePools"][0]["capacity"]["reservation"]
    return cfg


def test_a_pool_of_two_ultraservers_lists_each_block_id_not_one():
    (err,) = errors_of(_two_ultraservers(P6E))
    assert err.startswith(
        "error: gpu-cluster:nodePools[0].capacity.reservations: pool 'gb200': 36 reserved nodes are 2 "
        "u-p6e-gb200x72 UltraServers, each its own capacity block, and an EKS node group targets one block by "
        "its ID: an EKS managed node group on a Capacity Block needs the block's CapacityReservationId"
    )
    assert [i.path for i in issues_of(_two_blocks(P6E)) if not i.warning] == []
    assert any(
        "not an EC2 capacity block ID" in e
        for e in errors_of(
            edit(_two_blocks(P6E), "nodePools[0].capacity.reservations", ["cr-0123456789abcdef0", "gb200"])
        )
    )
    assert any(
        "listed twice" in e
        for e in errors_of(edit(_two_blocks(P6E), "nodePools[0].capacity.reservations", BLOCKS[:1] * 2))
    )


def test_a_reservation_group_on_an_eks_pool_is_refused_citing_the_eks_capacity_block_guide():
    arn = "arn:aws:resource-groups:us-east-1:123456789012:group/gb200-blocks"
    cfg = edit(_two_ultraservers(P6E), "nodePools[0].capacity.reservationGroup", arn)
    del cfg["nodePools"][0]["capacity"]["reservation"]
    errs = errors_of(cfg)
    (group,) = [e for e in errs if "capacity.reservationGroup" in e]
    assert "cannot target a Capacity Reservation Resource Group" in group
    assert "capacity-blocks-mng.html" in group and "eksctl-io/eksctl#7906" in group
    assert "capacity.reservations: one capacity block ID" in group


def test_two_team_namespaces_on_one_rack_pool_are_warned_about_sharing_a_clique():
    cfg = copy.deepcopy(A4X)
    assert not [m for m in _messages(cfg) if "ComputeDomains (one per team namespace" in m]  # one team: one domain
    cfg["scheduling"]["queues"][0]["quotas"][0]["gpus"] = 72
    cfg["scheduling"]["queues"].append({"name": "research", "quotas": [{"pool": "gb200", "gpus": 72}]})
    (warning,) = [m for m in _messages(cfg) if "ComputeDomains (one per team namespace" in m]
    assert warning.startswith(
        "warning: gpu-cluster:nodePools[0].multiNode: pool 'gb200': 2 ComputeDomains (one per "
        "team namespace: pretraining, research) can put IMEX daemons of two domains in one "
        "NVLink clique"
    )
    assert "dra-driver-nvidia-gpu#892" in warning


def _rendered_blocks(cfg) -> list[tuple[str, str]]:
    """(topology name, block) of every block in the topology.yaml the Slurm planner renders for ``cfg``."""
    import yaml

    from catalog import load_catalog
    from stacks.plan.facts import pool_facts
    from stacks.plan.slurm import plan_slurm
    from stacks.validate.load import decode_config, load_spec

    spec, _ = load_spec(decode_config({f"gpu-cluster:{k}": v for k, v in cfg.items()}))
    cat = load_catalog()
    plan = plan_slurm(spec.scheduling, [pool_facts(spec, p, cat) for p in spec.node_pools])
    doc = yaml.safe_load(plan.topology.render_yaml())
    return [(t["topology"], b["block"]) for t in doc if "block" in t for b in t["block"]["blocks"]]


def test_slurm_nvlink_blocks_of_a_fixed_pool_warn_with_the_annotation_value_of_each_rendered_block():
    """Slinky reads ``<topology name>:<block>``: the value users are told to set must name a rendered block. A pool
    of one node group per UltraServer block is annotated by gpu-cluster's annotator: no advice there."""
    two = _two_blocks(P6E)
    one = edit(P6E, "nodePools[0].minNodes", 18)
    assert _rendered_blocks(copy.deepcopy(two)) == [("gb200", "gb200-b0"), ("gb200", "gb200-b1")]
    assert not [m for m in _messages(two) if "topology.slinky.slurm.net/spec" in m]
    for cfg, blocks in ((one, ["gb200-b0"]),):
        assert _rendered_blocks(copy.deepcopy(cfg)) == [("gb200", b) for b in blocks]
        (warning,) = [m for m in _messages(cfg) if "topology.slinky.slurm.net/spec" in m]
        assert warning.startswith(
            "warning: gpu-cluster:nodePools[0].multiNode: pool 'gb200': the Slinky operator puts "
            "a node in one of Slurm's blocks (Topology=gb200) only from its Kubernetes node's "
            "annotation topology.slinky.slurm.net/spec"
        )
        assert "Slurm places -p gb200 jobs as if there were no blocks" in warning
        # one UltraServer is one NVLink domain: only a second one lets an unplaced job straddle two
        assert ("so a job may straddle NVLink domains" in warning) == (len(blocks) > 1)
        assert "topology.slinky.slurm.net/spec=gb200:gb200-b0" in warning and "topo-block" not in warning
        if len(blocks) > 1:
            assert "(next blocks: gb200:gb200-b1)" in warning
    assert not [m for m in _messages(copy.deepcopy(A4X)) if "topology.slinky.slurm.net/spec" in m]  # Kueue: labels


def test_a_power_saving_pool_of_one_block_creates_its_records_in_the_block_and_asks_for_no_annotation():
    """Powered-down records without the block next to annotated nodes make Slurm refuse multi-node jobs: the records
    of a ``minNodes: 0`` pool of one block are created in it, so nothing needs annotating."""
    assert P6E["nodePools"][0]["minNodes"] == 0
    assert not [m for m in _messages(copy.deepcopy(P6E)) if "topology.slinky.slurm.net/spec" in m]
    assert _cloud_records(copy.deepcopy(P6E)) == [
        "NodeName=gb200-[0-17]",
        "Features=gb200",
        "Topology=gb200:gb200-b0",
        "State=CLOUD",
    ]
    # pods from the start stay unannotated and unplaced: the records are not put in the block next to them
    (warning,) = [m for m in _messages(edit(P6E, "nodePools[0].minNodes", 2)) if "Requested node configuration" in m]
    assert warning.startswith("warning: gpu-cluster:nodePools[0].minNodes: pool 'gb200': the first 2 node(s)")
    assert "Topology=" not in " ".join(_cloud_records(edit(P6E, "nodePools[0].minNodes", 2)))


def test_a_power_saving_pool_of_several_blocks_is_refused_naming_the_fix():
    """Ordinals move between UltraServers as pods come and go: a powered-down record's block cannot be known."""
    two = _two_blocks(P6E)
    (err,) = errors_of(edit(two, "nodePools[0].minNodes", 0))
    assert err.startswith(
        "error: gpu-cluster:nodePools[0].minNodes: pool 'gb200': a pool that follows the queue "
        "(minNodes < maxNodes) cannot keep 2 Slurm blocks of 18 nodes"
    )
    assert "minNodes = maxNodes (36)" in err and "set nodePools[0].minNodes: 36" in err
    assert not _errors(edit(edit(two, "nodePools[0].minNodes", 0), "scheduling.slurm.scaling.enabled", False))


def _errors(cfg) -> list[str]:
    return [str(i) for i in issues_of(cfg) if not i.warning]


def _cloud_records(cfg) -> list[str]:
    """The ``scontrol create`` arguments of the powered-down records, without the node's CPUs/Gres/RealMemory."""
    from catalog import load_catalog
    from stacks.plan.facts import pool_facts
    from stacks.plan.slurm import plan_slurm
    from stacks.validate.load import decode_config, load_spec

    spec, _ = load_spec(decode_config({f"gpu-cluster:{k}": v for k, v in cfg.items()}))
    plan = plan_slurm(spec.scheduling, [pool_facts(spec, p, load_catalog()) for p in spec.node_pools])
    (cmd,) = plan.scaling.cloud_nodes(plan.nodesets)
    return [a for a in cmd[2:] if not a.startswith(("CPUs=", "Gres=", "RealMemory="))]


def test_a_list_of_block_ids_on_a_pool_that_is_not_rack_scale_is_refused():
    cfg = {
        "cloud": "aws",
        "region": "us-east-1",
        "cluster": {"name": "ml", "subnets": {"us-east-1a": "subnet-0123456789abcdef1"}},
        "nodePools": [
            {
                "name": "p5",
                "machineType": "p5.48xlarge",
                "zones": ["us-east-1a"],
                "maxNodes": 2,
                "capacity": {"type": "reservation", "reservations": BLOCKS, "reservationKind": "capacity-block"},
            }
        ],
    }
    (err,) = [e for e in errors_of(cfg) if "capacity.reservations" in e]
    assert "reservations is for pools of several UltraServer capacity blocks" in err
    assert "capacity.reservation" in err
