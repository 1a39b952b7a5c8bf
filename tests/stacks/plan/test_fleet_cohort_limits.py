"""The manager's cohort gives a fleet queue no more than the workers' Kueues do. Each worker exports, per queue and
GPU model, what the queue lends its cohort (``lendingLimit``, else its whole nominal quota) and the most it can
borrow there (its ``borrowingLimit``, capped by what its siblings lend; Kueue's cohort arithmetic); the manager's
ClusterQueues carry the sums as their own ``lendingLimit`` / ``borrowingLimit``, worked out by hand below from
Pulumi.fleet-gke.yaml and Pulumi.fleet-eks.yaml."""

from __future__ import annotations

from stacks.plan.fleet import cohort_limits
from stacks.spec.fleet import FACTS_OUTPUT
from tests.support.helm.examples import recording


def queues(stack: str) -> dict[str, dict]:
    return {q["name"]: q for q in recording(stack).outputs[FACTS_OUTPUT]["queues"]}


def manager_gpus(queue: str) -> dict[str, dict]:
    cq = next(
        r.inputs
        for r in recording("fleet").resources
        if r.type.endswith(":ClusterQueue") and r.inputs["metadata"]["name"] == queue
    )
    return {
        f["name"]: next(x for x in f["resources"] if x["name"] == "nvidia.com/gpu")
        for f in cq["spec"]["resourceGroups"][0]["flavors"]
    }


def test_workers_export_what_each_queue_lends_and_can_borrow_in_their_cohort():
    gke, eks = queues("fleet-gke"), queues("fleet-eks")
    # gke: research lends at most 8 of its 24 H100 (lendingLimit 8); product lends all its 8, so research borrows 8;
    # product's borrowingLimit 16 is capped by the 8 research lends
    assert gke["research"]["lendable"]["H100_80GB"] == 8 and gke["research"]["borrowable"]["H100_80GB"] == 8
    assert gke["product"]["lendable"]["H100_80GB"] == 8 and gke["product"]["borrowable"]["H100_80GB"] == 8
    # eks: research lends 4 of 12 p5 GPUs; product (borrowingLimit 4) borrows those 4; on L40S product's
    # borrowingLimit 2 binds, research (no limit) borrows all 6 product lends
    assert eks["research"]["lendable"]["H100_80GB"] == 4 and eks["product"]["borrowable"]["H100_80GB"] == 4
    assert eks["product"]["borrowable"]["L40S"] == 2 and eks["research"]["borrowable"]["L40S"] == 6


def test_manager_queues_carry_the_workers_summed_cohort_limits():
    research, product = manager_gpus("research"), manager_gpus("product")
    assert research["fleet-h100-80gb"] == {
        "name": "nvidia.com/gpu",
        "nominalQuota": 36,
        "lendingLimit": 8 + 4,
        "borrowingLimit": 8 + 4,
    }
    assert research["fleet-l40s"] == {"name": "nvidia.com/gpu", "nominalQuota": 2, "borrowingLimit": 6}
    # product lends all its GPUs on both workers: no lendingLimit; it borrows 8 + 4 H100 and only 2 L40S
    assert product["fleet-h100-80gb"] == {"name": "nvidia.com/gpu", "nominalQuota": 12, "borrowingLimit": 12}
    assert product["fleet-l40s"] == {"name": "nvidia.com/gpu", "nominalQuota": 6, "borrowingLimit": 2}


def test_no_fleet_queue_can_hold_more_at_the_manager_than_its_workers_can_admit():
    workers = [queues("fleet-gke"), queues("fleet-eks")]
    for queue in ("research", "product"):
        for flavor, res in manager_gpus(queue).items():
            model = {"fleet-h100-80gb": "H100_80GB", "fleet-l4": "L4", "fleet-l40s": "L40S"}[flavor]
            reach = sum(w[queue]["gpus"].get(model, 0) + w[queue]["borrowable"].get(model, 0) for w in workers)
            assert res["nominalQuota"] + res["borrowingLimit"] <= reach, (queue, flavor)


def test_cohort_limits_count_only_the_mirrored_queue_and_leave_out_a_lending_limit_of_everything():
    worker = {
        "queues": [
            {"name": "a", "namespace": "a", "gpus": {"L4": 8}, "lendable": {"L4": 8}, "borrowable": {"L4": 2}},
            {"name": "a", "namespace": "other", "gpus": {"L4": 8}, "lendable": {"L4": 0}, "borrowable": {"L4": 9}},
        ]
    }
    assert cohort_limits("a", "a", {"l4": 8}, [worker, None]) == {"l4": {"borrowingLimit": 2}}
    assert cohort_limits("a", "a", {"l4": 16}, [worker, worker]) == {"l4": {"borrowingLimit": 4}}  # lends all 16
    assert cohort_limits("a", "other", {"l4": 8}, [worker]) == {"l4": {"borrowingLimit": 9, "lendingLimit": 0}}
