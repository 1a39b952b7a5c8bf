"""Capacity blocks and reservations under mocks: a block's node group is created at size 0 with its upgrade inputs
held, its Auto Scaling group (named by EKS, read from the node group's outputs) gets the scale-up and scale-to-0
actions, and the cost facts the policies read are on the node group / node pool."""

from __future__ import annotations

import pytest

from preview.engine import run_program
from tests.support.spec.edit import edit
from tests.support.preview.recorded import of_type, one, parent_of
from tests.support.spec.stack_configs import EKS, GKE

NODE_GROUP, SCHEDULE = "aws:eks/nodeGroup:NodeGroup", "aws:autoscaling/schedule:Schedule"
WINDOW = {"start": "2030-01-07T11:30:00Z", "durationHours": 336}
BLOCK = {
    "type": "reservation",
    "reservation": "cr-0123456789abcdef0",
    "reservationKind": "capacity-block",
    "window": WINDOW,
    "upfrontFeeUsd": 21504.0,
}
HELD = ["scalingConfig.desiredSize", "launchTemplate.version", "releaseVersion", "version"]


def block_stack(**capacity) -> dict:
    return edit(edit(EKS, "nodePools[0].capacity", {**BLOCK, **capacity}), "nodePools[0].minNodes", 2)


def test_block_group_starts_at_zero_and_holds_upgrades():
    group = one(run_program(block_stack()), NODE_GROUP, "p5")
    assert group.inputs["scalingConfig"] == {"minSize": 0, "desiredSize": 0, "maxSize": 2}
    assert group.ignore_changes == HELD


def test_roll_nodes_lets_this_up_roll_launch_template_changes():
    group = one(run_program(block_stack(rollNodes=True)), NODE_GROUP, "p5")
    assert group.ignore_changes == ["scalingConfig.desiredSize"]


def test_other_groups_start_at_min_nodes_and_roll_changes():
    group = one(run_program(edit(EKS, "nodePools[0].minNodes", 1)), NODE_GROUP, "p5")
    assert group.inputs["scalingConfig"] == {"minSize": 1, "desiredSize": 1, "maxSize": 2}
    assert group.ignore_changes == ["scalingConfig.desiredSize"]
    assert of_type(run_program(EKS), SCHEDULE) == []


def test_schedules_sit_on_the_node_groups_auto_scaling_group():
    """The ASG name comes from the node group's ``resources`` output (the mock answers ``eks-p5-offline``), so the
    value proves the apply on the output ran."""
    rec = run_program(block_stack())
    up, down = one(rec, SCHEDULE, "p5-scale-up"), one(rec, SCHEDULE, "p5-scale-down")
    assert up.inputs == {
        "autoscalingGroupName": "eks-p5-offline",
        "scheduledActionName": "gpu-cluster-p5-scale-up",
        "startTime": "2030-01-07T11:30:00Z",
        "minSize": 2,
        "maxSize": 2,
        "desiredCapacity": 2,
    }
    assert down.inputs == {
        "autoscalingGroupName": "eks-p5-offline",
        "scheduledActionName": "gpu-cluster-p5-scale-down",
        "startTime": "2030-01-21T10:45:00Z",
        "minSize": 0,
        "maxSize": 0,
        "desiredCapacity": 0,
    }
    group = one(rec, NODE_GROUP, "p5")
    assert parent_of(rec, up).name == "p5" and group.urn in up.dependencies


def test_block_without_window_gets_no_schedule_and_no_window_tags():
    rec = run_program(block_stack(window=None, upfrontFeeUsd=None))
    assert of_type(rec, SCHEDULE) == []
    tags = one(rec, NODE_GROUP, "p5").inputs["tags"]
    assert {k: v for k, v in tags.items() if k.startswith("gpu-cluster/") and k != "gpu-cluster/pool"} == {
        "gpu-cluster/reserved-nodes": "2"
    }


def test_block_fee_window_and_size_are_tags_the_cost_policies_read():
    tags = one(run_program(block_stack(reservedNodes=2)), NODE_GROUP, "p5").inputs["tags"]
    assert {k: v for k, v in tags.items() if k.startswith("gpu-cluster/")} == {
        "gpu-cluster/pool": "p5",
        "gpu-cluster/reserved-nodes": "2",
        "gpu-cluster/capacity-block-usd": "21504.00",
        "gpu-cluster/capacity-block-start": "2030-01-07T11:30:00Z",
        "gpu-cluster/capacity-block-end": "2030-01-21T11:30:00Z",
    }


@pytest.mark.parametrize(
    "capacity, expected",
    [
        (None, {"team": "ml"}),
        ({"type": "reservation", "reservation": "res-a3"}, {"team": "ml", "gpu-cluster-reserved-nodes": "4"}),
        (
            {"type": "reservation", "reservation": "res-a3", "reservedNodes": 6},
            {"team": "ml", "gpu-cluster-reserved-nodes": "6"},
        ),
    ],
    ids=["on-demand", "reservation-default", "reservation-declared"],
)
def test_gke_reservation_pool_labels_its_reserved_nodes(capacity, expected):
    config = GKE if capacity is None else edit(GKE, "nodePools[0].capacity", capacity)
    pool = one(run_program(config), "gcp:container/nodePool:NodePool", "h100")
    assert pool.inputs["nodeConfig"]["resourceLabels"] == expected
