"""cross-layer-queued-pool-queue (mandatory): a queued-provisioning pool is reachable by some queue. The flex-start
example passes; taking away the queue's quota, its admission check or the check's class gives the exact message;
a waiver clears it. Also: flex-start pools are exempt from auto-repair, queued pools from compact placement."""

from __future__ import annotations

import json

import pytest

from tests.support.policy.scheduler_rules import recorded, recorded_with, swap
from tests.support.spec.edit import DELETE, edit
from tests.support.policy.harness import Pack, find, wire, with_props

RULE = "cross-layer-queued-pool-queue"
STACK = "gke-flex-start-tas"
NP = "gcp:container/nodePool:NodePool"
CQ = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
PRC = "kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig"
REQUIRED = (
    "required: a ClusterQueue with GPU quota on the pool's flavor and an AdmissionCheck (controller "
    "kueue.x-k8s.io/provisioning-request) whose ProvisioningRequestConfig has class queued-provisioning.gke.io, "
    "on that flavor"
)
FIX = (
    "Fix: give a queue quota in the pool (gpu-cluster: scheduling.queues[].quotas with workload: kubeflow adds the "
    f"check), or turn queued provisioning off, or waive {RULE} for this pool if another stack runs its queues"
)


@pytest.fixture()
def pack() -> Pack:
    return Pack()


def findings(pack: Pack, resources) -> list[tuple[str, str, str]]:
    return [d for d in pack.stack(resources) if d[0] == RULE]


def _without_checks(resources):
    """Both ClusterQueues of the example without their admissionChecksStrategy."""
    for name in ("kueue-cq-research", "kueue-cq-product"):
        cq = find(resources, CQ, name)
        resources = swap(resources, cq, edit(wire(cq), "spec.admissionChecksStrategy", DELETE))
    return resources


def test_the_example_passes(pack):
    rs = recorded(STACK)
    assert findings(pack, rs) == []
    assert [d for d in pack.everything(rs) if d[1] == "mandatory"] == []


def test_queues_with_quota_but_no_provisioning_check(pack):
    assert findings(pack, _without_checks(recorded(STACK))) == [
        (
            RULE,
            "mandatory",
            "pool 'h100-flex': this queued-provisioning pool is reachable by no queue: ClusterQueues with quota on it "
            "(product, research) have no ProvisioningRequest admission check for it, so Kueue admits workloads whose pods "
            "wait for nodes the pool never creates · observed: no AdmissionCheck of class queued-provisioning.gke.io on "
            f"the pool's flavor in those ClusterQueues · {REQUIRED}\n{FIX}",
        )
    ]


def test_one_queue_with_the_check_is_enough(pack):
    rs = recorded(STACK)
    cq = find(rs, CQ, "kueue-cq-product")
    assert findings(pack, swap(rs, cq, edit(wire(cq), "spec.admissionChecksStrategy", DELETE))) == []


def test_no_queue_has_quota_in_the_pool(pack):
    rs = [r for r in recorded(STACK) if r.type != CQ]
    assert findings(pack, rs) == [
        (
            RULE,
            "mandatory",
            "pool 'h100-flex': this queued-provisioning pool is reachable by no queue: no Kueue ClusterQueue has GPU quota "
            "on it, so nothing ever creates a ProvisioningRequest and the pool never gets a node · observed: no "
            "ClusterQueue with nvidia.com/gpu nominalQuota on a ResourceFlavor selecting the pool · "
            f"{REQUIRED}\n{FIX}",
        )
    ]


def test_a_check_of_the_wrong_class_does_not_reach_the_pool(pack):
    rs = recorded(STACK)
    prc = find(rs, PRC, "kueue-prc-h100-flex-provisioning")
    wrong = edit(wire(prc), "spec.provisioningClassName", "check-capacity.autoscaling.x-k8s.io")
    assert [d[2].split(" · ")[0] for d in findings(pack, swap(rs, prc, wrong))] == [
        "pool 'h100-flex': this queued-provisioning pool is reachable by no queue: ClusterQueues with quota on it "
        "(product, research) have no ProvisioningRequest admission check for it, so Kueue admits workloads whose pods "
        "wait for nodes the pool never creates"
    ]


def test_pools_without_queued_provisioning_are_not_concerned(pack):
    rs = _without_checks(recorded(STACK))
    pool = find(rs, NP, "h100-flex")
    assert findings(pack, swap(rs, pool, edit(wire(pool), "queuedProvisioning", DELETE))) == []
    assert findings(pack, recorded("gke-kueue")) == []


def test_a_waiver_names_the_pool(pack, waived):
    assert waived(pack, RULE, "h100-flex", lambda: pack.stack(_without_checks(recorded(STACK)))) == []


def test_eks_queued_node_group_is_read_from_its_tag(pack):
    """An EKS group tagged gpu-cluster/queued-provisioning with no queue reaching it is a violation too."""
    rs = list(recorded_with("eks-queued", json.dumps(_eks_queued_config())))
    assert findings(pack, rs) == []
    no_cq = [r for r in rs if r.type != CQ]
    assert [d[2].split(":")[0] for d in findings(pack, no_cq)] == ["pool 'h100'"]


def _eks_queued_config() -> dict:
    return {
        "aws:region": "us-east-1",
        "gpu-cluster:cloud": "aws",
        "gpu-cluster:region": "us-east-1",
        "gpu-cluster:cluster": {
            "name": "llm",
            "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
        },
        "gpu-cluster:nodePools": [
            {
                "name": "h100",
                "machineType": "p5.48xlarge",
                "zones": ["us-east-1a"],
                "maxNodes": 4,
                "multiNode": True,
                "capacity": {"queuedProvisioning": True},
            }
        ],
        "gpu-cluster:scheduling": {
            "workload": "kubeflow",
            "queues": [{"name": "train", "quotas": [{"pool": "h100", "gpus": 32}]}],
            "topology": {"mode": "required", "level": "block"},
        },
    }


# -- neighbours: auto-repair and compact placement ---------------------------------------------------------------
def test_flex_start_pools_are_exempt_from_auto_repair_only(pack):
    rs = recorded(STACK)
    pool = find(rs, NP, "h100-flex")
    assert wire(pool)["management"]["autoRepair"] is False
    assert [d for d in pack.resource(pool, rs) if d[0] == "security-gke-auto-repair"] == []
    on_demand = with_props(pool, edit(wire(pool), "nodeConfig.flexStart", DELETE))
    assert [d[0] for d in pack.resource(on_demand, rs) if d[0] == "security-gke-auto-repair"] == [
        "security-gke-auto-repair"
    ]


def test_queued_pools_need_no_compact_placement(pack):
    rs = recorded(STACK)
    pool = find(rs, NP, "h100-flex")
    assert "placementPolicy" not in wire(pool) or wire(pool)["placementPolicy"] is None
    assert [d for d in pack.stack(rs) if d[0] == "topology-multi-node-placement"] == []
    not_queued = swap(rs, pool, edit(wire(pool), "queuedProvisioning", DELETE))
    assert [d[0] for d in pack.stack(not_queued) if d[0] == "topology-multi-node-placement"] == [
        "topology-multi-node-placement"
    ]
