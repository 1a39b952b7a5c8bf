"""Bad Slurm settings: each row breaks a valid ``workload: slurm`` spec once and pins the exact message a user reads
(path and problem, then received / allowed / fix). A row fails when the message changes. Kueue-only settings and GPU
sharing have their table in ``test_slurm_refuses_kueue_settings_and_gpu_sharing.py``."""

from __future__ import annotations

import copy
import textwrap
from typing import Any

import pytest

from tests.support.spec.edit import edits
from tests.support.spec.cases import assert_pool_issues_name_their_pool, errors_of
from tests.support.spec.slurm_baseline import BASE, case
from stacks.validate.load import load_spec

EKS_SMALL: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {
        "name": "ml",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [{"name": "h1", "machineType": "p5.4xlarge", "zones": ["us-east-1a"], "minNodes": 2, "maxNodes": 2}],
    "scheduling": {"workload": "slurm", "queues": [{"name": "t", "quotas": [{"pool": "h1", "gpus": 2}]}]},
}


def test_the_baseline_is_valid_and_warning_free():
    spec, warnings = load_spec(copy.deepcopy(BASE))
    assert spec.scheduling.slurm.block_size == 4 and warnings == []


CASES = [
    case(
        {("scheduling", "slurm", "partitions"): [{"name": "train", "pools": ["h100", "h10"]}]},
        """
    error: gpu-cluster:scheduling.slurm.partitions[0].pools[1]: partition names an unknown pool
      received: 'h10'
      allowed:  h100, l4
      fix:      did you mean 'h100'?
    """,
        id="partition-unknown-pool",
    ),
    case(
        {("scheduling", "slurm", "accounting"): False},
        """
    error: gpu-cluster:scheduling.slurm.accounting: fair-share and age priority need accounting (slurmdbd); slurmctld ignores priorityWeights fairShare and age without it
      received: false
      allowed:  true (or omit it) while priorityWeights.fairShare or .age is above 0
      fix:      remove accounting: false, or set priorityWeights.fairShare and .age to 0
    """,
        id="fairshare-without-accounting",
    ),
    case(
        {("scheduling", "slurm", "blockSize"): 3},
        """
    error: gpu-cluster:scheduling.slurm.blockSize: pool h100's maxNodes (8) is not a multiple of the block size: the last block would be partial
      received: 3
      allowed:  a divisor of 8: 1, 2, 4, 8
      fix:      set blockSize to a divisor of 8, or nodePools[0].maxNodes to a multiple of 3
    """,
        id="block-size-not-dividing",
    ),
    case(
        {("scheduling", "slurm", "nodeSets"): [{"pool": "h100", "gres": "gpu:h100:4"}]},
        """
    error: gpu-cluster:scheduling.slurm.nodeSets[0].gres: GRES differs from the catalog's a3-highgpu-8g (8 x H100_80GB); Slurm would never schedule the missing or extra GPUs
      received: 'gpu:h100:4'
      allowed:  gpu:h100:8
      fix:      set gres: gpu:h100:8, or remove it
    """,
        id="gres-differs",
    ),
    case(
        {("scheduling", "slurm", "qosPreempts"): {"high": ["high", "low"]}},
        """
    error: gpu-cluster:scheduling.slurm.qosPreempts.high[0]: a QOS cannot preempt itself (Slurm refuses it; jobs of one class never preempt each other)
      received: 'high'
      allowed:  low
      fix:      remove high from qosPreempts.high
    """,
        id="qos-preempts-itself",
    ),
    case(
        {("scheduling", "slurm", "qosPreempts"): {"high": ["lowest"]}},
        """
    error: gpu-cluster:scheduling.slurm.qosPreempts.high[0]: not a priority class
      received: 'lowest'
      allowed:  high, low
      fix:      did you mean 'low'?
    """,
        id="qos-preempts-unknown",
    ),
    case(
        {("scheduling", "slurm", "qosPreempts"): {"low": ["high"]}},
        """
    error: gpu-cluster:scheduling.slurm.qosPreempts.low[0]: low (value 10) would preempt the higher class high (value 100)
      received: 'high'
      allowed:  none
      fix:      remove high, or raise low's value above 100
    """,
        id="qos-preempts-higher",
    ),
    case(
        {("scheduling", "slurm", "defaultQos"): "medium"},
        """
    error: gpu-cluster:scheduling.slurm.defaultQos: not a priority class
      received: 'medium'
      allowed:  high, low
      fix:      set it to one of the allowed values
    """,
        id="default-qos-unknown",
    ),
    case(
        {("scheduling", "priorityClasses"): [{"name": "high", "value": 100}, {"name": "low", "value": -5}]},
        """
    error: gpu-cluster:scheduling.priorityClasses[1].value: a Slurm QOS priority is an unsigned 32-bit number
      received: -5
      allowed:  0 to 4294967295
      fix:      use a value of 0 or more (only the order between classes matters)
    """,
        id="negative-qos",
    ),
    case(
        {("scheduling", "slurm", "preemptType"): "partition_prio", ("scheduling", "slurm", "allPoolsPartition"): False},
        """
    error: gpu-cluster:scheduling.slurm.preemptType: partition_prio needs partitions of different priorityTier; every partition here has the same tier
      received: 'partition_prio'
      allowed:  allPoolsPartition: true (tier 1 under the pools' tier 2), or partitions with another priorityTier
      fix:      set allPoolsPartition: true, or preemptType: qos
    """,
        id="partition-prio-one-tier",
    ),
    case(
        {("scheduling", "slurm", "preemptType"): "qos", ("scheduling", "priorityClasses"): []},
        """
    error: gpu-cluster:scheduling.slurm.preemptType: QOS preemption needs at least two priority classes
      received: 'qos'
      allowed:  qos with two or more priorityClasses; partition_prio; none
      fix:      add scheduling.priorityClasses, or set preemptType: none
    """,
        id="qos-preempt-without-classes",
    ),
    case(
        {("nodePools", 1, "name"): "default", ("scheduling", "queues", 1, "quotas", 0, "pool"): "default"},
        """
    error: gpu-cluster:nodePools[1].name: pool 'default': with workload slurm each pool becomes a partition and NodeSet of the same name, and this name is reserved
      received: 'default'
      allowed:  any pool name except default, all
      fix:      rename the pool (and its references in scheduling.queues)
    """,
        id="pool-named-default",
    ),
    case(
        {("scheduling", "slurm", "partitions"): [{"name": "l4", "pools": ["h100"]}]},
        """
    error: gpu-cluster:scheduling.slurm.partitions[0].name: partition name already used (every pool has a partition of its own name, and `all` spans every pool)
      received: 'l4'
      allowed:  a name other than all, h100, l4
      fix:      rename the partition
    """,
        id="partition-name-clash",
    ),
    case(
        {("scheduling", "queues", 0, "name"): "root"},
        """
    error: gpu-cluster:scheduling.queues[0].name: Slurm's root account already exists and holds every other account
      received: 'root'
      allowed:  any name except root
      fix:      rename the queue
    """,
        id="queue-root",
    ),
    case(
        {("scheduling", "topology"): {"level": "zone"}},
        """
    error: gpu-cluster:scheduling.slurm.blockSize: blockSize only applies to topology-aware placement by block
      received: 4
      allowed:  topology.level: block with topology.mode required or preferred
      fix:      remove blockSize, or set scheduling.topology.level: block
    """,
        id="blocksize-without-block-level",
    ),
    case(
        {("scheduling", "slurm", "nodeSets"): [{"pool": "l4", "cpus": 8}]},
        """
    error: gpu-cluster:scheduling.slurm.nodeSets[0].cpus: more CPUs than g2-standard-8 can give Slurm (it has 8 vCPUs; the kubelet and DaemonSets need some)
      received: 8
      allowed:  1 to 7
      fix:      lower it, or omit it for the default 6
    """,
        id="cpus-too-many",
    ),
    case(
        {("scheduling", "slurm", "nodeSets"): [{"pool": "h200"}]},
        """
    error: gpu-cluster:scheduling.slurm.nodeSets[0].pool: NodeSet names an unknown pool
      received: 'h200'
      allowed:  h100, l4
      fix:      did you mean 'h100'?
    """,
        id="nodeset-unknown-pool",
    ),
    case(
        {
            ("scheduling", "slurm", "partitions"): [
                {"name": "a", "pools": ["h100"], "default": True},
                {"name": "b", "pools": ["l4"], "default": True},
            ]
        },
        """
    error: gpu-cluster:scheduling.slurm.partitions: more than one default partition
      received: ["a", "b"]
      allowed:  at most one
      fix:      keep default: true on one of a, b
    """,
        id="two-defaults",
    ),
    case(
        {("scheduling", "workload"): "kubeflow"},
        """
    error: gpu-cluster:scheduling.slurm: Slurm settings apply only to workload slurm
      received: {"blockSize": 4}
      allowed:  workload: slurm
      fix:      remove scheduling.slurm, or set scheduling.workload: slurm
    """,
        id="slurm-with-kubeflow",
    ),
    case(
        {
            ("nodePools", 1, "maxNodes"): 1020,
            ("nodePools", 1, "minNodes"): 1020,  # 2 zones: under GKE's 1,000 a zone
            ("nodePools", 1, "zones"): ["us-central1-a", "us-central1-b"],
        },
        """
    error: gpu-cluster:nodePools: Slinky declares MaxNodeCount=1024 dynamic Slurm nodes, and the pools' maxNodes add up to more
      received: 1028
      allowed:  at most 1024 nodes over all pools
      fix:      lower maxNodes, or split the pools over two clusters
    """,
        id="too-many-nodes",
    ),
]


@pytest.mark.parametrize("changes,expected", CASES)
def test_bad_slurm_setting_is_refused_with_its_exact_message(changes, expected):
    assert errors_of(edits(BASE, changes)) == expected


@pytest.mark.parametrize("changes,expected", CASES)
def test_every_pool_issue_names_its_pool(changes, expected):
    assert_pool_issues_name_their_pool(edits(BASE, changes))


def test_a_machine_without_vcpu_and_ram_in_the_catalog_needs_explicit_node_resources():
    assert errors_of(EKS_SMALL) == [
        textwrap.dedent("""\
        error: gpu-cluster:nodePools[0].machineType: pool 'h1': the catalog has no vCPU/RAM figure for p5.4xlarge, and a Slurm node needs CPUs and RealMemory
          received: 'p5.4xlarge'
          allowed:  a machine type with vCPU and RAM in the catalog, or explicit values
          fix:      add scheduling.slurm.nodeSets: [{pool: h1, cpus: ..., realMemoryMib: ...}]""")
    ]
    fixed = edits(
        EKS_SMALL, {("scheduling", "slurm"): {"nodeSets": [{"pool": "h1", "cpus": 14, "realMemoryMib": 61440}]}}
    )
    spec, _ = load_spec(fixed)
    assert spec.scheduling.slurm.node_sets[0].cpus == 14


def test_every_error_is_reported_at_once():
    cfg = edits(
        BASE,
        {
            ("scheduling", "slurm"): {
                "blockSize": 3,
                "accounting": False,
                "defaultQos": "medium",
                "qosPreempts": {"high": ["high"]},
            }
        },
    )
    paths = [e.splitlines()[0].split(": ")[1] for e in errors_of(cfg)]
    assert paths == [
        "gpu-cluster:scheduling.slurm.accounting",
        "gpu-cluster:scheduling.slurm.blockSize",
        "gpu-cluster:scheduling.slurm.defaultQos",
        "gpu-cluster:scheduling.slurm.qosPreempts.high[0]",
    ]


def test_slurm_warnings_do_not_block_the_stack():
    cfg = edits(
        BASE,
        {("nodePools", 1, "minNodes"): 0, ("scheduling", "preemption"): {"withinQueue": "LowerOrNewerEqualPriority"}},
    )
    assert [w.path for w in load_spec(cfg)[1]] == ["gpu-cluster:scheduling.preemption.withinQueue"]  # l4 scales
    cfg = edits(cfg, {("scheduling", "slurm", "scaling"): {"enabled": False}})
    _, warnings = load_spec(cfg)
    assert [w.path for w in warnings] == [
        "gpu-cluster:nodePools[1].minNodes",
        "gpu-cluster:scheduling.preemption.withinQueue",
    ]
    assert warnings[0].problem.startswith("pool 'l4': ") and "scales to maxNodes and stays there" in warnings[0].problem
    assert "cannot preempt jobs of the same QOS" in warnings[1].problem
