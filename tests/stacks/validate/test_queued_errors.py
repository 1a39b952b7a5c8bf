"""Flex-start and queued provisioning: where they exist, GKE's node-pool shape, the seven-day limit, a price; and
what they allow in ``scheduling`` (required topology-aware placement on an autoscaled queued pool) and refuse
(Slurm on a queued pool, required block placement where queued nodes carry no block labels).

The pool rows live in ``tests/support/spec/error_cases/queued.py``; a row fails when its message changes.
"""

from __future__ import annotations

import pytest

from catalog import CapacityType
from stacks.plan.queued import ATOMIC_SCALE_UP_CLASS, GKE_QUEUED_CLASS, max_run_duration, queued_plan
from tests.support.spec.edit import edits
from tests.support.spec.cases import assert_every_issue_explains_itself, config_for, errors_of
from tests.support.spec.error_cases.queued import CASES, KUEUE
from stacks.validate.load import load_spec

FLEX_POOL = {
    "name": "h100",
    "machineType": "a3-highgpu-8g",
    "zones": ["us-central1-a"],
    "maxNodes": 8,
    "multiNode": True,
    "capacity": {"type": "flex-start"},
}
TEAMS = {
    "workload": "kubeflow",
    "queues": [{"name": "research", "quotas": [{"pool": "h100", "gpus": 32}]}],
    "topology": {"mode": "required", "level": "zone"},
}


def _flex(changes=None) -> dict:
    return edits(config_for("gke", {"nodePools": [FLEX_POOL], "scheduling": TEAMS}), changes or {})


@pytest.mark.parametrize("base, changes, expected", CASES)
def test_bad_queued_pool_is_rejected_with_exact_message(base, changes, expected):
    assert errors_of(config_for(base, changes)) == expected


@pytest.mark.parametrize("base, changes, expected", CASES)
def test_every_issue_has_path_problem_and_fix(base, changes, expected):
    assert_every_issue_explains_itself(config_for(base, changes))


def test_flex_start_defaults_to_queued_provisioning_for_seven_days():
    spec, warnings = load_spec(_flex())
    pool = spec.node_pools[0]
    assert pool.capacity.type == CapacityType.FLEX_START and warnings == []
    plan = queued_plan(spec.cloud, pool)
    assert plan is not None and plan.provisioning_class == GKE_QUEUED_CLASS and plan.max_run_seconds == 604800
    assert max_run_duration(pool) == "604800s"


def test_flex_start_without_queued_provisioning_is_a_plain_autoscaled_pool():
    spec, _ = load_spec(
        _flex(
            {
                "nodePools[0].capacity.queuedProvisioning": False,
                "scheduling.topology.mode": "preferred",
                "nodePools[0].capacity.maxRunHours": 24,
            }
        )
    )
    pool = spec.node_pools[0]
    assert queued_plan(spec.cloud, pool) is None and max_run_duration(pool) == "86400s"


def test_eks_queued_pool_uses_the_cluster_autoscalers_atomic_class():
    spec, _ = load_spec(config_for("eks", {"nodePools[0].capacity": {"queuedProvisioning": True}, "scheduling": KUEUE}))
    plan = queued_plan(spec.cloud, spec.node_pools[0])
    assert plan is not None and plan.provisioning_class == ATOMIC_SCALE_UP_CLASS and plan.max_run_seconds is None


def test_required_placement_is_allowed_on_an_autoscaled_queued_pool_and_refused_without_queueing():
    load_spec(_flex())  # accepted: the ProvisioningRequest check provisions the nodes before TAS places the gang
    assert errors_of(_flex({"nodePools[0].capacity": {"type": "on-demand"}})) == [
        "error: gpu-cluster:scheduling.topology.mode: required placement needs pools of fixed size or with queued "
        "provisioning, and h100 (0-8 nodes) autoscales: Kueue topology-aware admission counts only nodes that exist, "
        "so a gang would wait for a scale-up it never triggers\n"
        "  received: 'required'\n"
        "  allowed:  preferred or none (or minNodes = maxNodes, or capacity.queuedProvisioning, on those pools)\n"
        "  fix:      use topology.mode: preferred, set minNodes equal to maxNodes (e.g. on a reservation), or turn on "
        "queued provisioning (GKE: capacity.type flex-start)"
    ]


def test_required_block_placement_on_a_queued_a3_high_pool_is_refused():
    """GKE gives queued pools no compact placement, and A3 High nodes then carry no block labels."""
    assert errors_of(_flex({"scheduling.topology.level": "block"})) == [
        "error: gpu-cluster:scheduling.topology.level: required block placement is impossible on h100 "
        "(a3-highgpu-8g, queued: no compact placement): GKE puts no block topology labels on those nodes\n"
        "  received: 'block'\n"
        "  allowed:  zone or host (or topology.mode: preferred)\n"
        "  fix:      use level: zone or host, or mode: preferred, or move those quotas to a pool with block labels "
        "(GKE A3/A4, EKS p4d/p5/p6/g6e)"
    ]


def test_slurm_cannot_use_a_queued_pool():
    slurm = {"workload": "slurm", "queues": [{"name": "research", "quotas": [{"pool": "h100", "gpus": 32}]}]}
    assert errors_of(_flex({"scheduling": slurm})) == [
        "error: gpu-cluster:scheduling.queues[0].quotas[0].pool: pool h100 gets nodes only through "
        "ProvisioningRequests, which Kueue creates and Slurm does not\n"
        "  received: 'h100'\n"
        "  allowed:  pools without queued provisioning (workload: slurm)\n"
        "  fix:      use workload: kubeflow, or set nodePools[0].capacity.queuedProvisioning: false (GKE: a capacity "
        "type other than flex-start)"
    ]
