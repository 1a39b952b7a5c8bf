"""Cross-layer rules over the scheduler objects the examples render: Kueue Topology labels, Slurm fair-share needing
accounting, Slurm block sizes fitting the pool. Each example passes; one recorded field changed per case gives the
exact message (the spec validation refuses most of these up front: the pack re-checks the rendered resources)."""
from __future__ import annotations

import dataclasses
import functools
import json

import pytest
import yaml

from catalog import Cloud, load_catalog
from preview.engine import PROJECT_ROOT, read_stack_file, run_program, stack_file
from tests.support.spec.edit import edit, edits
from tests.support.policy.harness import Pack, find, wire, with_props

NP, NG, RELEASE = "gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup", "kubernetes:helm.sh/v3:Release"
TOPOLOGY = "kubernetes:kueue.x-k8s.io/v1beta2:Topology"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
KUEUE_TOPOLOGY = "cross-layer-kueue-topology"
FAIRSHARE = "cross-layer-slurm-fairshare-accounting"
BLOCKS = "cross-layer-slurm-block-size"
NEW_RULES = (KUEUE_TOPOLOGY, FAIRSHARE, BLOCKS)
ALL_STACKS = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))
GKE_LEVELS = ("topology.kubernetes.io/zone, cloud.google.com/gce-topology-block, cloud.google.com/gce-topology-subblock, "
              "cloud.google.com/gce-topology-host, kubernetes.io/hostname")
EKS_LEVELS = ("topology.kubernetes.io/zone, topology.k8s.aws/network-node-layer-1, topology.k8s.aws/network-node-layer-2, "
              "topology.k8s.aws/network-node-layer-3, kubernetes.io/hostname")


@functools.cache
def _recorded(stack: str, config_json: str | None = None):
    config = json.loads(config_json) if config_json else read_stack_file(stack_file(stack))
    return tuple(run_program(config, stack).resources)


def recorded(stack: str) -> list:
    return list(_recorded(stack))


def swap(resources, old, props):
    return [with_props(old, props) if r is old else r for r in resources]


def new_findings(pack: Pack, resources) -> list[tuple[str, str, str]]:
    return [d for d in pack.stack(resources) if d[0] in NEW_RULES]


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
    assert new_findings(pack, swap(rs, topology, typo)) == [(
        KUEUE_TOPOLOGY, "mandatory",
        f"Kueue Topology '{name}': a level uses a label GKE never sets and no node pool of this stack adds, so "
        "topology-aware scheduling finds no node of pool 'h100' with that label and gangs stay Pending · observed: "
        "spec.levels[1].nodeLabel cloud.google.com/gce-topology-blok · required: GKE node labels: "
        f"{GKE_LEVELS}\nFix: use one of those labels in spec.levels[1], "
        f"or add the label to extraLabels of {KUEUE_TOPOLOGY} if your nodes get it from elsewhere")]


def test_kueue_topology_eks_label_on_gke(pack):
    rs, topology, name = _gke_topology()
    eks = edit(wire(topology), "spec.levels[1].nodeLabel", "topology.k8s.aws/network-node-layer-1")
    assert new_findings(pack, swap(rs, topology, eks)) == [(
        KUEUE_TOPOLOGY, "mandatory",
        f"Kueue Topology '{name}': a level uses an EKS label, but this stack's node pools are GKE ones, so "
        "topology-aware scheduling finds no node of pool 'h100' with that label and gangs stay Pending · observed: "
        "spec.levels[1].nodeLabel topology.k8s.aws/network-node-layer-1 · required: GKE node labels: "
        f"{GKE_LEVELS}\nFix: use the GKE labels in spec.levels "
        "(gpu-cluster renders them for the stack's cloud)")]


def test_kueue_topology_gke_label_on_eks(pack):
    rs = recorded("eks-kueue")
    topology = find(rs, TOPOLOGY, "kueue-topology-eks-network")
    name = wire(topology)["metadata"]["name"]
    gke = edit(wire(topology), "spec.levels[2].nodeLabel", "cloud.google.com/gce-topology-subblock")
    assert new_findings(pack, swap(rs, topology, gke)) == [(
        KUEUE_TOPOLOGY, "mandatory",
        f"Kueue Topology '{name}': a level uses a GKE label, but this stack's node pools are EKS ones, so "
        "topology-aware scheduling finds no node of pool 'p5' with that label and gangs stay Pending · observed: "
        "spec.levels[2].nodeLabel cloud.google.com/gce-topology-subblock · required: EKS node labels: "
        f"{EKS_LEVELS}\nFix: use the EKS labels in spec.levels "
        "(gpu-cluster renders them for the stack's cloud)")]


def test_kueue_topology_hostname_only_last(pack):
    rs, topology, name = _gke_topology()
    early = edit(wire(topology), "spec.levels[1].nodeLabel", "kubernetes.io/hostname")
    assert new_findings(pack, swap(rs, topology, early)) == [(
        KUEUE_TOPOLOGY, "mandatory",
        f"Kueue Topology '{name}': kubernetes.io/hostname is not the last level, so the API server refuses this "
        "Topology and nothing is admitted to pool 'h100' · observed: kubernetes.io/hostname is spec.levels[1] of 5 · "
        "required: kubernetes.io/hostname last (Kueue accepts it only there)\nFix: move kubernetes.io/hostname to the "
        "end of spec.levels")]


def test_kueue_topology_levels_broadest_first(pack):
    rs, topology, name = _gke_topology()
    host_high = edit(wire(topology), "spec.levels[1].nodeLabel", "cloud.google.com/gce-topology-host")
    assert new_findings(pack, swap(rs, topology, host_high)) == [(
        KUEUE_TOPOLOGY, "mandatory",
        f"Kueue Topology '{name}': a level is broader than the level above it, so Kueue nests the domains the wrong "
        "way round and spreads gangs over nodes it should keep together · observed: spec.levels[2] "
        "cloud.google.com/gce-topology-subblock under cloud.google.com/gce-topology-host · required: levels broadest "
        f"first: {GKE_LEVELS}\nFix: reorder spec.levels "
        "broadest first (gpu-cluster renders them in that order)")]


def test_kueue_flavor_names_a_topology_that_exists(pack):
    rs, _, name = _gke_topology()
    flavor = find(rs, FLAVOR, "kueue-flavor-h100")
    flavor_name = wire(flavor)["metadata"]["name"]
    gone = edit(wire(flavor), "spec.topologyName", "gke-network-old")
    assert new_findings(pack, swap(rs, flavor, gone)) == [(
        KUEUE_TOPOLOGY, "mandatory",
        f"Kueue ResourceFlavor '{flavor_name}': its topology is not in this stack, so Kueue keeps the ClusterQueues "
        "that use this flavor inactive and admits nothing to pool 'h100' · observed: spec.topologyName "
        f"gke-network-old · required: a Topology of this stack: {name}\nFix: set spec.topologyName to a Topology of "
        "the stack (gpu-cluster "
        "renders the flavor and its Topology together: re-render both), or waive cross-layer-kueue-topology for this "
        "flavor if another stack creates the Topology")]


def test_kueue_topology_without_pools_refuses_mixed_clouds(pack):
    rs, topology, name = _gke_topology()
    rs = [r for r in rs if r.type != NP]  # pools in another stack: the cloud is unknown, either cloud's labels pass
    assert new_findings(pack, rs) == []
    topology = find(rs, TOPOLOGY, "kueue-topology-gke-network")
    mixed = edit(wire(topology), "spec.levels[1].nodeLabel", "topology.k8s.aws/network-node-layer-1")
    assert new_findings(pack, swap(rs, topology, mixed)) == [(
        KUEUE_TOPOLOGY, "mandatory",
        f"Kueue Topology '{name}': spec.levels mix GKE and EKS labels, and no node carries both, so topology-aware "
        "scheduling finds no node of pool 'h100' with that label and gangs stay Pending · observed: GKE labels "
        "cloud.google.com/gce-topology-subblock, cloud.google.com/gce-topology-host; EKS labels "
        "topology.k8s.aws/network-node-layer-1 · required: the labels of one cloud\nFix: keep the labels of the cloud "
        "the pools run on")]


def test_kueue_topology_accepts_labels_a_pool_sets_or_the_config_lists_and_honours_waivers(pack):
    rs, topology, _ = _gke_topology()
    rack = swap(rs, topology, edit(wire(topology), "spec.levels[1].nodeLabel", "example.com/rack"))
    assert [d[2].split(":")[0] for d in new_findings(pack, rack)] == [f"Kueue Topology '{wire(topology)['metadata']['name']}'"]
    pool = find(rack, NP, "h100")
    labels = {**wire(pool)["nodeConfig"]["labels"], "example.com/rack": "r1"}
    labelled = swap(rack, pool, edit(wire(pool), "nodeConfig.labels", labels))
    assert new_findings(pack, labelled) == [], "a label the pool itself sets is on its nodes"
    pack.configure({KUEUE_TOPOLOGY: {"extraLabels": ["example.com/rack"]}})
    assert new_findings(pack, rack) == []
    pack.configure({KUEUE_TOPOLOGY: {"waivers": [{"rule": KUEUE_TOPOLOGY, "resource": "h100",
                                                  "reason": "racks labelled by our node-labeller DaemonSet"}]}})
    assert new_findings(pack, rack) == []


# -- cross-layer-slurm-fairshare-accounting ----------------------------------------------------------------------
def _slurm():
    rs = recorded("gke-h100-512")
    release = find(rs, RELEASE, "slurm-slurm")
    return rs, release, wire(release)


FAIRSHARE_FIX = ("Fix: turn accounting on (values accounting.enabled: true; gpu-cluster: remove "
                 "scheduling.slurm.accounting: false), or set ")


def test_fairshare_and_age_without_accounting(pack):
    rs, release, values = _slurm()
    assert values["values"]["accounting"]["enabled"] is True
    off = edit(values, "values.accounting.enabled", False)
    assert new_findings(pack, swap(rs, release, off)) == [(
        FAIRSHARE, "mandatory",
        "Slurm cluster 'h100-train': priority weights are set but accounting is off, so slurmctld ignores these "
        "weights and never orders jobs by fair share or age · observed: slurm.conf sets PriorityWeightFairshare=10000 "
        "and PriorityWeightAge=1000; accounting.enabled is false, so AccountingStorageType=accounting_storage/none · "
        "required: PriorityWeightFairshare and PriorityWeightAge need "
        "AccountingStorageType=accounting_storage/slurmdbd\n" + FAIRSHARE_FIX
        + "PriorityWeightFairshare and PriorityWeightAge to 0")]
    unweighted = edit(off, "values.controller.extraConf", values["values"]["controller"]["extraConf"].replace(
        "PriorityWeightFairshare=10000", "PriorityWeightFairshare=0").replace("PriorityWeightAge=1000",
                                                                              "PriorityWeightAge=0"))
    assert new_findings(pack, swap(rs, release, unweighted)) == [], "no weight on usage: no accounting needed"


def test_fairshare_with_accounting_storage_overridden_in_extra_conf(pack):
    rs, release, values = _slurm()
    conf = values["values"]["controller"]["extraConf"] + "\naccountingstoragetype=accounting_storage/none  # off"
    assert new_findings(pack, swap(rs, release, edit(values, "values.controller.extraConf", conf))) == [(
        FAIRSHARE, "mandatory",
        "Slurm cluster 'h100-train': priority weights are set but accounting is off, so slurmctld ignores these "
        "weights and never orders jobs by fair share or age · observed: slurm.conf sets PriorityWeightFairshare=10000 "
        "and PriorityWeightAge=1000; controller.extraConf sets AccountingStorageType=accounting_storage/none · "
        "required: PriorityWeightFairshare and PriorityWeightAge need "
        "AccountingStorageType=accounting_storage/slurmdbd\n" + FAIRSHARE_FIX
        + "PriorityWeightFairshare and PriorityWeightAge to 0")]


def test_age_alone_from_extra_conf_map(pack):
    rs, release, values = _slurm()
    controller = {"extraConfMap": {"PriorityWeightAge": 1000, "AccountingStorageType": "accounting_storage/none"}}
    assert new_findings(pack, swap(rs, release, edit(values, "values.controller", controller))) == [(
        FAIRSHARE, "mandatory",
        "Slurm cluster 'h100-train': priority weights are set but accounting is off, so slurmctld ignores this weight "
        "and never orders jobs by age · observed: slurm.conf sets PriorityWeightAge=1000; controller.extraConfMap sets "
        "AccountingStorageType=accounting_storage/none · required: PriorityWeightAge needs "
        "AccountingStorageType=accounting_storage/slurmdbd\n" + FAIRSHARE_FIX + "PriorityWeightAge to 0")]


# -- cross-layer-slurm-block-size --------------------------------------------------------------------------------
def _with_block_sizes(values, sizes):
    files = values["values"]["configFiles"]
    doc = yaml.safe_load(files["topology.yaml"])
    (block,) = [t for t in doc if "block" in t]
    assert block["topology"] == "h100-mega" and block["block"]["block_sizes"] == [8, 16, 32, 64]
    block["block"]["block_sizes"] = sizes
    text = "---\n" + yaml.safe_dump(doc, sort_keys=False)
    return edit(values, "values.configFiles", {**files, "topology.yaml": text})


def test_block_size_that_does_not_divide_the_pool(pack):
    rs, release, values = _slurm()
    assert new_findings(pack, swap(rs, release, _with_block_sizes(values, [24, 48]))) == [(
        BLOCKS, "mandatory",
        "Slurm topology 'h100-mega': the base block size does not divide the nodes of pool 'h100-mega' (its node "
        "pool's max nodes), so 16 nodes form a partial block that never fits a job sized for a full block · observed: "
        "base block size 24 for 64 nodes · required: a base block size that divides 64: 1, 2, 4, 8, 16, 32, 64\nFix: "
        "start block_sizes at a divisor of 64 (gpu-cluster: scheduling.slurm.blockSize), or make the pool's max nodes "
        "a multiple of 24")]


def test_block_sizes_double_up(pack):
    rs, release, values = _slurm()
    assert new_findings(pack, swap(rs, release, _with_block_sizes(values, [8, 24]))) == [(
        BLOCKS, "mandatory",
        "Slurm topology 'h100-mega': 24 is not 8 times a power of two, so slurmctld refuses to start (fatal: Invalid "
        "BlockSizes value in topology h100-mega) · observed: block_sizes 8, 24 · required: each size the one before "
        "times 2, 4, 8 …: e.g. 8, 16, 32\nFix: make each block size double (or quadruple …) the one before it "
        "(gpu-cluster renders 8, "
        "16, … up to the pool's nodes)")]


def test_block_size_against_the_node_pool_max(pack):
    rs, _, _ = _slurm()
    pool = find(rs, NP, "h100-mega")
    assert wire(pool)["autoscaling"]["totalMaxNodeCount"] == 64
    shrunk = swap(rs, pool, edit(wire(pool), "autoscaling.totalMaxNodeCount", 60))
    assert [d for d in new_findings(pack, shrunk)] == [(
        BLOCKS, "mandatory",
        "Slurm topology 'h100-mega': the base block size does not divide the nodes of pool 'h100-mega' (its node "
        "pool's max nodes), so 4 nodes form a partial block that never fits a job sized for a full block · observed: "
        "base block size 8 for 60 nodes · required: a base block size that divides 60: 1, 2, 3, 4, 5, 6, 10, 12, 15, "
        "20, 30, 60\nFix: start block_sizes at a divisor of 60 (gpu-cluster: scheduling.slurm.blockSize), or make the "
        "pool's max nodes a multiple of 8")]


def test_block_size_against_the_nodeset_when_the_pool_is_elsewhere(pack):
    rs, release, values = _slurm()
    rs = [r for r in rs if r.type != NP]
    assert new_findings(pack, rs) == []
    release = find(rs, RELEASE, "slurm-slurm")
    fewer = edit(values, "values.nodesets.h100-mega.replicas", 20)
    (finding,) = new_findings(pack, swap(rs, release, fewer))
    assert finding[2].startswith("Slurm topology 'h100-mega': the base block size does not divide the nodes of "
                                 "NodeSet 'h100-mega' (its replicas), so 4 nodes form a partial block")
    assert " · observed: base block size 8 for 20 nodes · " in finding[2]


def test_block_size_is_the_nvlink_domain_when_it_spans_nodes(pack, monkeypatch):
    """No catalog machine has a multi-node NVLink domain yet (GB200 NVL72 racks would): pretend a3-megagpu-8g has."""
    rs, _, _ = _slurm()
    machines = load_catalog().machines
    mega = machines[(Cloud.GCP, "a3-megagpu-8g")]
    monkeypatch.setitem(machines, (Cloud.GCP, "a3-megagpu-8g"), dataclasses.replace(mega, nvlink_domain_gpus=64))
    assert new_findings(pack, rs) == [], "8 nodes per NVLink domain = the base block size 8"
    monkeypatch.setitem(machines, (Cloud.GCP, "a3-megagpu-8g"), dataclasses.replace(mega, nvlink_domain_gpus=128))
    assert new_findings(pack, rs) == [(
        BLOCKS, "mandatory",
        "Slurm topology 'h100-mega': the base block size is not one NVLink domain of pool 'h100-mega', so blocks "
        "split NVLink domains · observed: base block size 8; a3-megagpu-8g: 16 nodes share one NVLink domain · "
        "required: a base block size of 16\nFix: start block_sizes at 16 "
        "(gpu-cluster: remove scheduling.slurm.blockSize; the base block is then the NVLink domain)")]


def test_larger_block_sizes_need_not_divide_the_pool():
    """gpu-cluster renders the base size and its doublings up to the pool: 24 nodes in blocks of 8 give 8, 16, which a
    real slurmctld 26.05 accepts (its topology.conf(5) example even has 30, 120 over 128 nodes). Only the base size
    must divide the pool."""
    config = edits(read_stack_file(stack_file("gke-h100-512")), {
        "nodePools[0].minNodes": 24, "nodePools[0].maxNodes": 24, "scheduling.queues[0].quotas[0].gpus": 64})
    rs = list(_recorded("gke-h100-512", json.dumps(config)))
    topology = yaml.safe_load(wire(find(rs, RELEASE, "slurm-slurm"))["values"]["configFiles"]["topology.yaml"])
    assert [t["block"]["block_sizes"] for t in topology if "block" in t] == [[8, 16]]
    assert new_findings(Pack(), rs) == []


def test_fairshare_and_block_size_are_waived_per_slurm_cluster_and_topology(pack, waived):
    rs, release, values = _slurm()
    no_accounting = swap(rs, release, edit(values, "values.accounting.enabled", False))
    assert waived(pack, FAIRSHARE, "h100-train", lambda: new_findings(pack, no_accounting)) == []
    uneven = swap(rs, release, _with_block_sizes(values, [24, 48]))
    assert waived(pack, BLOCKS, "h100-mega", lambda: new_findings(pack, uneven)) == []
