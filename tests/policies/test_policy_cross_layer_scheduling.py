"""Cross-layer rules over the scheduler objects the examples render: Kueue Topology labels here, the Slurm rules
(fair-share needing accounting, block sizes fitting the pool) in ``test_policy_cross_layer_slurm.py``. Each example
passes; one recorded field changed per case gives the exact message (the spec validation refuses most of these up
front: the pack re-checks the rendered resources)."""

from __future__ import annotations

import pytest

from preview.engine import PROJECT_ROOT
from tests.support.spec.edit import edit
from tests.support.policy.harness import Pack, find, wire
from tests.support.policy.scheduler_rules import KUEUE_TOPOLOGY, new_findings, recorded, swap

NP, NG = "gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup"
TOPOLOGY = "kubernetes:kueue.x-k8s.io/v1beta2:Topology"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
ALL_STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))
GKE_LEVELS = (
    "topology.kubernetes.io/zone, cloud.google.com/gce-topology-block, cloud.google.com/gce-topology-subblock, "
    "cloud.google.com/gce-topology-host, kubernetes.io/hostname"
)
EKS_LEVELS = (
    "topology.kubernetes.io/zone, topology.k8s.aws/network-node-layer-1, topology.k8s.aws/network-node-layer-2, "
    "topology.k8s.aws/network-node-layer-3, kubernetes.io/hostname"
)


@pytest.fixture()
def pack() -> Pack:
    return Pack()


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_example_passes_the_scheduler_rules(pack, stack):
    assert new_findings(pack, recorded(stack)) == []


# -- cross-layer-kueue-topology ----------------------------------------------------------------------------------
def _gke_topology():
    rs = recorded("gke-kueue")
    topology = find(rs, TOPOLOGY, "kueue-topology-gke-network")
    name = wire(topology)["metadata"]["name"]
    assert name.startswith("gke-network-")
    return rs, topology, name


def test_kueue_topology_level_the_cloud_never_sets(pack):
    rs, topology, name = _gke_topology()
    typo = edit(wire(topology), "spec.levels[1].nodeLabel", "cloud.google.com/gce-topology-blok")
    assert new_findings(pack, swap(rs, topology, typo)) == [
        (
            KUEUE_TOPOLOGY,
            "mandatory",
            f"Kueue Topology '{name}': a level uses a label GKE never sets and no node pool of this stack adds, so "
            "topology-aware scheduling finds no node of pool 'h100' with that label and gangs stay Pending · observed: "
            "spec.levels[1].nodeLabel cloud.google.com/gce-topology-blok · required: GKE node labels: "
            f"{GKE_LEVELS}\nFix: use one of those labels in spec.levels[1], "
            f"or add the label to extraLabels of {KUEUE_TOPOLOGY} if your nodes get it from elsewhere",
        )
    ]


def test_kueue_topology_eks_label_on_gke(pack):
    rs, topology, name = _gke_topology()
    eks = edit(wire(topology), "spec.levels[1].nodeLabel", "topology.k8s.aws/network-node-layer-1")
    assert new_findings(pack, swap(rs, topology, eks)) == [
        (
            KUEUE_TOPOLOGY,
            "mandatory",
            f"Kueue Topology '{name}': a level uses an EKS label, but this stack's node pools are GKE ones, so "
            "topology-aware scheduling finds no node of pool 'h100' with that label and gangs stay Pending · observed: "
            "spec.levels[1].nodeLabel topology.k8s.aws/network-node-layer-1 · required: GKE node labels: "
            f"{GKE_LEVELS}\nFix: use the GKE labels in spec.levels "
            "(gpu-cluster renders them for the stack's cloud)",
        )
    ]


def test_kueue_topology_gke_label_on_eks(pack):
    rs = recorded("eks-kueue")
    topology = find(rs, TOPOLOGY, "kueue-topology-eks-network")
    name = wire(topology)["metadata"]["name"]
    gke = edit(wire(topology), "spec.levels[2].nodeLabel", "cloud.google.com/gce-topology-subblock")
    assert new_findings(pack, swap(rs, topology, gke)) == [
        (
            KUEUE_TOPOLOGY,
            "mandatory",
            f"Kueue Topology '{name}': a level uses a GKE label, but this stack's node pools are EKS ones, so "
            "topology-aware scheduling finds no node of pool 'p5' with that label and gangs stay Pending · observed: "
            "spec.levels[2].nodeLabel cloud.google.com/gce-topology-subblock · required: EKS node labels: "
            f"{EKS_LEVELS}\nFix: use the EKS labels in spec.levels "
            "(gpu-cluster renders them for the stack's cloud)",
        )
    ]


def test_kueue_topology_hostname_only_last(pack):
    rs, topology, name = _gke_topology()
    early = edit(wire(topology), "spec.levels[1].nodeLabel", "kubernetes.io/hostname")
    assert new_findings(pack, swap(rs, topology, early)) == [
        (
            KUEUE_TOPOLOGY,
            "mandatory",
            f"Kueue Topology '{name}': kubernetes.io/hostname is not the last level, so the API server refuses this "
            "Topology and nothing is admitted to pool 'h100' · observed: kubernetes.io/hostname is spec.levels[1] of 5 · "
            "required: kubernetes.io/hostname last (Kueue accepts it only there)\nFix: move kubernetes.io/hostname to the "
            "end of spec.levels",
        )
    ]


def test_kueue_topology_levels_broadest_first(pack):
    rs, topology, name = _gke_topology()
    host_high = edit(wire(topology), "spec.levels[1].nodeLabel", "cloud.google.com/gce-topology-host")
    assert new_findings(pack, swap(rs, topology, host_high)) == [
        (
            KUEUE_TOPOLOGY,
            "mandatory",
            f"Kueue Topology '{name}': a level is broader than the level above it, so Kueue nests the domains the wrong "
            "way round and spreads gangs over nodes it should keep together · observed: spec.levels[2] "
            "cloud.google.com/gce-topology-subblock under cloud.google.com/gce-topology-host · required: levels broadest "
            f"first: {GKE_LEVELS}\nFix: reorder spec.levels "
            "broadest first (gpu-cluster renders them in that order)",
        )
    ]


def test_kueue_flavor_names_a_topology_that_exists(pack):
    rs, _, name = _gke_topology()
    flavor = find(rs, FLAVOR, "kueue-flavor-h100")
    flavor_name = wire(flavor)["metadata"]["name"]
    gone = edit(wire(flavor), "spec.topologyName", "gke-network-old")
    assert new_findings(pack, swap(rs, flavor, gone)) == [
        (
            KUEUE_TOPOLOGY,
            "mandatory",
            f"Kueue ResourceFlavor '{flavor_name}': its topology is not in this stack, so Kueue keeps the ClusterQueues "
            "that use this flavor inactive and admits nothing to pool 'h100' · observed: spec.topologyName "
            f"gke-network-old · required: a Topology of this stack: {name}\nFix: set spec.topologyName to a Topology of "
            "the stack (gpu-cluster "
            "renders the flavor and its Topology together: re-render both), or waive cross-layer-kueue-topology for this "
            "flavor if another stack creates the Topology",
        )
    ]


def test_kueue_topology_without_pools_refuses_mixed_clouds(pack):
    rs, topology, name = _gke_topology()
    rs = [r for r in rs if r.type != NP]  # pools in another stack: the cloud is unknown, either cloud's labels pass
    assert new_findings(pack, rs) == []
    topology = find(rs, TOPOLOGY, "kueue-topology-gke-network")
    mixed = edit(wire(topology), "spec.levels[1].nodeLabel", "topology.k8s.aws/network-node-layer-1")
    assert new_findings(pack, swap(rs, topology, mixed)) == [
        (
            KUEUE_TOPOLOGY,
            "mandatory",
            f"Kueue Topology '{name}': spec.levels mix GKE and EKS labels, and no node carries both, so topology-aware "
            "scheduling finds no node of pool 'h100' with that label and gangs stay Pending · observed: GKE labels "
            "cloud.google.com/gce-topology-subblock, cloud.google.com/gce-topology-host; EKS labels "
            "topology.k8s.aws/network-node-layer-1 · required: the labels of one cloud\nFix: keep the labels of the cloud "
            "the pools run on",
        )
    ]


def test_kueue_topology_accepts_labels_a_pool_sets_or_the_config_lists_and_honours_waivers(pack):
    rs, topology, _ = _gke_topology()
    rack = swap(rs, topology, edit(wire(topology), "spec.levels[1].nodeLabel", "example.com/rack"))
    assert [d[2].split(":")[0] for d in new_findings(pack, rack)] == [
        f"Kueue Topology '{wire(topology)['metadata']['name']}'"
    ]
    pool = find(rack, NP, "h100")
    labels = {**wire(pool)["nodeConfig"]["labels"], "example.com/rack": "r1"}
    labelled = swap(rack, pool, edit(wire(pool), "nodeConfig.labels", labels))
    assert new_findings(pack, labelled) == [], "a label the pool itself sets is on its nodes"
    pack.configure({KUEUE_TOPOLOGY: {"extraLabels": ["example.com/rack"]}})
    assert new_findings(pack, rack) == []
    pack.configure(
        {
            KUEUE_TOPOLOGY: {
                "waivers": [
                    {
                        "rule": KUEUE_TOPOLOGY,
                        "resource": "h100",
                        "reason": "racks labelled by our node-labeller DaemonSet",
                    }
                ]
            }
        }
    )
    assert new_findings(pack, rack) == []
