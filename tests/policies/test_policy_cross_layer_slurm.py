"""Cross-layer rules over the Slurm objects the examples render: fair-share and age weights need accounting, and
block sizes fit the pool (and its NVLink domain). One recorded field changed per case gives the exact message; every
example passing these rules is checked in ``test_policy_cross_layer_scheduling.py``."""

from __future__ import annotations

import dataclasses
import json

import pytest
import yaml

from catalog import Cloud, load_catalog
from preview.engine import read_stack_file, stack_file
from tests.support.spec.edit import edit, edits
from tests.support.policy.harness import Pack, find, wire
from tests.support.policy.scheduler_rules import BLOCKS, FAIRSHARE, new_findings, recorded, recorded_with, swap

NP, RELEASE = "gcp:container/nodePool:NodePool", "kubernetes:helm.sh/v3:Release"


@pytest.fixture()
def pack() -> Pack:
    return Pack()


# -- cross-layer-slurm-fairshare-accounting ----------------------------------------------------------------------
def _slurm():
    rs = recorded("gke-h100-512")
    release = find(rs, RELEASE, "slurm-slurm")
    return rs, release, wire(release)


FAIRSHARE_FIX = (
    "Fix: turn accounting on (values accounting.enabled: true; gpu-cluster: remove "
    "scheduling.slurm.accounting: false), or set "
)


def test_fairshare_and_age_without_accounting(pack):
    rs, release, values = _slurm()
    assert values["values"]["accounting"]["enabled"] is True
    off = edit(values, "values.accounting.enabled", False)
    assert new_findings(pack, swap(rs, release, off)) == [
        (
            FAIRSHARE,
            "mandatory",
            "Slurm cluster 'h100-train': priority weights are set but accounting is off, so slurmctld ignores these "
            "weights and never orders jobs by fair share or age · observed: slurm.conf sets PriorityWeightFairshare=10000 "
            "and PriorityWeightAge=1000; accounting.enabled is false, so AccountingStorageType=accounting_storage/none · "
            "required: PriorityWeightFairshare and PriorityWeightAge need "
            "AccountingStorageType=accounting_storage/slurmdbd\n"
            + FAIRSHARE_FIX
            + "PriorityWeightFairshare and PriorityWeightAge to 0",
        )
    ]
    unweighted = edit(
        off,
        "values.controller.extraConf",
        values["values"]["controller"]["extraConf"]
        .replace("PriorityWeightFairshare=10000", "PriorityWeightFairshare=0")
        .replace("PriorityWeightAge=1000", "PriorityWeightAge=0"),
    )
    assert new_findings(pack, swap(rs, release, unweighted)) == [], "no weight on usage: no accounting needed"


def test_fairshare_with_accounting_storage_overridden_in_extra_conf(pack):
    rs, release, values = _slurm()
    conf = values["values"]["controller"]["extraConf"] + "\naccountingstoragetype=accounting_storage/none  # off"
    assert new_findings(pack, swap(rs, release, edit(values, "values.controller.extraConf", conf))) == [
        (
            FAIRSHARE,
            "mandatory",
            "Slurm cluster 'h100-train': priority weights are set but accounting is off, so slurmctld ignores these "
            "weights and never orders jobs by fair share or age · observed: slurm.conf sets PriorityWeightFairshare=10000 "
            "and PriorityWeightAge=1000; controller.extraConf sets AccountingStorageType=accounting_storage/none · "
            "required: PriorityWeightFairshare and PriorityWeightAge need "
            "AccountingStorageType=accounting_storage/slurmdbd\n"
            + FAIRSHARE_FIX
            + "PriorityWeightFairshare and PriorityWeightAge to 0",
        )
    ]


def test_age_alone_from_extra_conf_map(pack):
    rs, release, values = _slurm()
    controller = {"extraConfMap": {"PriorityWeightAge": 1000, "AccountingStorageType": "accounting_storage/none"}}
    assert new_findings(pack, swap(rs, release, edit(values, "values.controller", controller))) == [
        (
            FAIRSHARE,
            "mandatory",
            "Slurm cluster 'h100-train': priority weights are set but accounting is off, so slurmctld ignores this weight "
            "and never orders jobs by age · observed: slurm.conf sets PriorityWeightAge=1000; controller.extraConfMap sets "
            "AccountingStorageType=accounting_storage/none · required: PriorityWeightAge needs "
            "AccountingStorageType=accounting_storage/slurmdbd\n" + FAIRSHARE_FIX + "PriorityWeightAge to 0",
        )
    ]


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
    assert new_findings(pack, swap(rs, release, _with_block_sizes(values, [24, 48]))) == [
        (
            BLOCKS,
            "mandatory",
            "Slurm topology 'h100-mega': the base block size does not divide the nodes of pool 'h100-mega' (its node "
            "pool's max nodes), so 16 nodes form a partial block that never fits a job sized for a full block · observed: "
            "base block size 24 for 64 nodes · required: a base block size that divides 64: 1, 2, 4, 8, 16, 32, 64\nFix: "
            "start block_sizes at a divisor of 64 (gpu-cluster: scheduling.slurm.blockSize), or make the pool's max nodes "
            "a multiple of 24",
        )
    ]


def test_block_sizes_double_up(pack):
    rs, release, values = _slurm()
    assert new_findings(pack, swap(rs, release, _with_block_sizes(values, [8, 24]))) == [
        (
            BLOCKS,
            "mandatory",
            "Slurm topology 'h100-mega': 24 is not 8 times a power of two, so slurmctld refuses to start (fatal: Invalid "
            "BlockSizes value in topology h100-mega) · observed: block_sizes 8, 24 · required: each size the one before "
            "times 2, 4, 8 …: e.g. 8, 16, 32\nFix: make each block size double (or quadruple …) the one before it "
            "(gpu-cluster renders 8, "
            "16, … up to the pool's nodes)",
        )
    ]


def test_block_size_against_the_node_pool_max(pack):
    rs, _, _ = _slurm()
    pool = find(rs, NP, "h100-mega")
    assert wire(pool)["autoscaling"]["totalMaxNodeCount"] == 64
    shrunk = swap(rs, pool, edit(wire(pool), "autoscaling.totalMaxNodeCount", 60))
    assert [d for d in new_findings(pack, shrunk)] == [
        (
            BLOCKS,
            "mandatory",
            "Slurm topology 'h100-mega': the base block size does not divide the nodes of pool 'h100-mega' (its node "
            "pool's max nodes), so 4 nodes form a partial block that never fits a job sized for a full block · observed: "
            "base block size 8 for 60 nodes · required: a base block size that divides 60: 1, 2, 3, 4, 5, 6, 10, 12, 15, "
            "20, 30, 60\nFix: start block_sizes at a divisor of 60 (gpu-cluster: scheduling.slurm.blockSize), or make the "
            "pool's max nodes a multiple of 8",
        )
    ]


def test_block_size_against_the_nodeset_when_the_pool_is_elsewhere(pack):
    rs, release, values = _slurm()
    rs = [r for r in rs if r.type != NP]
    assert new_findings(pack, rs) == []
    release = find(rs, RELEASE, "slurm-slurm")
    fewer = edit(values, "values.nodesets.h100-mega.replicas", 20)
    (finding,) = new_findings(pack, swap(rs, release, fewer))
    assert finding[2].startswith(
        "Slurm topology 'h100-mega': the base block size does not divide the nodes of "
        "NodeSet 'h100-mega' (its replicas), so 4 nodes form a partial block"
    )
    assert " · observed: base block size 8 for 20 nodes · " in finding[2]


def test_block_size_is_the_nvlink_domain_when_it_spans_nodes(pack, monkeypatch):
    """No catalog machine has a multi-node NVLink domain yet (GB200 NVL72 racks would): pretend a3-megagpu-8g has."""
    rs, _, _ = _slurm()
    machines = load_catalog().machines
    mega = machines[(Cloud.GCP, "a3-megagpu-8g")]
    monkeypatch.setitem(machines, (Cloud.GCP, "a3-megagpu-8g"), dataclasses.replace(mega, nvlink_domain_gpus=64))
    assert new_findings(pack, rs) == [], "8 nodes per NVLink domain = the base block size 8"
    monkeypatch.setitem(machines, (Cloud.GCP, "a3-megagpu-8g"), dataclasses.replace(mega, nvlink_domain_gpus=128))
    assert new_findings(pack, rs) == [
        (
            BLOCKS,
            "mandatory",
            "Slurm topology 'h100-mega': the base block size is not one NVLink domain of pool 'h100-mega', so blocks "
            "split NVLink domains · observed: base block size 8; a3-megagpu-8g: 16 nodes share one NVLink domain · "
            "required: a base block size of 16\nFix: start block_sizes at 16 "
            "(gpu-cluster: remove scheduling.slurm.blockSize; the base block is then the NVLink domain)",
        )
    ]


def test_larger_block_sizes_need_not_divide_the_pool():
    """gpu-cluster renders the base size and its doublings up to the pool: 24 nodes in blocks of 8 give 8, 16, which a
    real slurmctld 26.05 accepts (its topology.conf(5) example even has 30, 120 over 128 nodes). Only the base size
    must divide the pool."""
    config = edits(
        read_stack_file(stack_file("gke-h100-512")),
        {"nodePools[0].minNodes": 24, "nodePools[0].maxNodes": 24, "scheduling.queues[0].quotas[0].gpus": 64},
    )
    rs = list(recorded_with("gke-h100-512", json.dumps(config)))
    topology = yaml.safe_load(wire(find(rs, RELEASE, "slurm-slurm"))["values"]["configFiles"]["topology.yaml"])
    assert [t["block"]["block_sizes"] for t in topology if "block" in t] == [[8, 16]]
    assert new_findings(Pack(), rs) == []


def test_fairshare_and_block_size_are_waived_per_slurm_cluster_and_topology(pack, waived):
    rs, release, values = _slurm()
    no_accounting = swap(rs, release, edit(values, "values.accounting.enabled", False))
    assert waived(pack, FAIRSHARE, "h100-train", lambda: new_findings(pack, no_accounting)) == []
    uneven = swap(rs, release, _with_block_sizes(values, [24, 48]))
    assert waived(pack, BLOCKS, "h100-mega", lambda: new_findings(pack, uneven)) == []
