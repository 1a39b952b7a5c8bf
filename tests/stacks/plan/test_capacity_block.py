"""Derived capacity-block facts (pure): the window from a length or an end, the price over it to the cent, the
scheduled sizes and which of them are still ahead, and the reserved nodes a reservation bills."""

from __future__ import annotations

import datetime as dt

import pytest

from catalog import Cloud
from stacks.plan.capacity_block import block_price, block_schedule, block_window
from stacks.plan.reservation import reserved_nodes
from stacks.spec.stack import NodePool

UTC = dt.timezone.utc
BLOCK = {"type": "reservation", "reservation": "cr-0123456789abcdef0", "reservationKind": "capacity-block"}


def pool(capacity: dict, min_nodes: int = 2, max_nodes: int = 2) -> NodePool:
    return NodePool.model_validate(
        {
            "name": "p5",
            "machineType": "p5.48xlarge",
            "zones": ["us-east-1a"],
            "minNodes": min_nodes,
            "maxNodes": max_nodes,
            "capacity": capacity,
        }
    )


def test_window_from_duration_or_end_is_the_same_block():
    by_length = pool({**BLOCK, "window": {"start": "2027-01-04T11:30:00Z", "durationHours": 336}})
    by_end = pool({**BLOCK, "window": {"start": "2027-01-04T12:30:00+01:00", "end": "2027-01-18T11:30:00Z"}})
    a, b = block_window(by_length), block_window(by_end)
    assert a is not None and b is not None and a.hours == b.hours == 336
    assert a.as_dict() == {
        "start": "2027-01-04T11:30:00Z",
        "end": "2027-01-18T11:30:00Z",
        "hours": 336.0,
        "scaleUpAt": "2027-01-04T11:30:00Z",
        "scaleDownAt": "2027-01-18T10:45:00Z",
    }


def test_block_price_spreads_the_fee_over_window_and_nodes_to_the_cent():
    p = pool(
        {
            **BLOCK,
            "reservedNodes": 2,
            "upfrontFeeUsd": 21146.88,
            "window": {"start": "2027-01-04T11:30:00Z", "durationHours": 336},
        }
    )
    price = block_price(Cloud.AWS, p, 8)
    assert price is not None
    assert (round(price.usd_per_hour, 2), round(price.usd_per_node_hour, 2), round(price.usd_per_gpu_hour, 4)) == (
        62.94,
        31.47,
        3.9336,
    )  # 21,146.88 / 336 h = 62.9371 $/h; / 2 nodes = 31.4686; / 8 GPUs = 3.93357


@pytest.mark.parametrize(
    "capacity",
    [
        {**BLOCK, "window": {"start": "2027-01-04T11:30:00Z", "durationHours": 24}},  # no fee
        {**BLOCK, "upfrontFeeUsd": 1000.0},  # no window
    ],
    ids=["no-fee", "no-window"],
)
def test_block_without_fee_or_window_has_no_price(capacity):
    assert block_price(Cloud.AWS, pool(capacity), 8) is None


def test_schedule_scales_up_at_start_and_to_zero_45_minutes_before_the_end_before_ec2_terminates():
    p = pool({**BLOCK, "window": {"start": "2027-01-04T11:30:00Z", "durationHours": 48}}, min_nodes=1, max_nodes=2)
    before = dt.datetime(2027, 1, 1, tzinfo=UTC)
    assert [a.as_dict() for a in block_schedule(p, before)] == [
        {"action": "scale-up", "at": "2027-01-04T11:30:00Z", "minSize": 1, "maxSize": 2, "desiredCapacity": 1},
        {"action": "scale-down", "at": "2027-01-06T10:45:00Z", "minSize": 0, "maxSize": 0, "desiredCapacity": 0},
    ]
    during = dt.datetime(2027, 1, 5, tzinfo=UTC)
    assert [a.role for a in block_schedule(p, during)] == ["scale-down"]
    assert block_schedule(p, dt.datetime(2027, 1, 6, 10, 45, tzinfo=UTC)) == []


@pytest.mark.parametrize(
    "capacity, expected",
    [
        ({"type": "on-demand"}, None),
        ({"type": "reservation", "reservation": "cr-0123456789abcdef0"}, 4),
        ({"type": "reservation", "reservation": "cr-0123456789abcdef0", "reservedNodes": 6}, 6),
    ],
    ids=["on-demand", "default-max-nodes", "declared"],
)
def test_reserved_nodes_default_to_max_nodes(capacity, expected):
    assert reserved_nodes(pool(capacity, min_nodes=0, max_nodes=4)) == expected


def test_an_ultraserver_block_scales_down_before_ec2_terminates_it_an_hour_before_the_end():
    """EC2 cuts an UltraServer block's instances 60 minutes before its end (30 on an instance block): the group's
    scale-down must come 15 minutes before that, not at the instance block's 45."""
    window = {"start": "2027-01-04T11:30:00Z", "durationHours": 336}
    ultra = NodePool.model_validate(
        {
            "name": "gb200",
            "machineType": "p6e-gb200.36xlarge",
            "zones": ["us-east-1-dfw-2a"],
            "minNodes": 18,
            "maxNodes": 18,
            "capacity": {**BLOCK, "ultraserverType": "u-p6e-gb200x72", "window": window},
        }
    )
    found, plain = block_window(ultra), block_window(pool({**BLOCK, "window": window}))
    assert found is not None and plain is not None
    assert found.as_dict()["scaleDownAt"] == "2027-01-18T10:15:00Z"  # end 11:30, EC2 from 10:30
    assert plain.as_dict()["scaleDownAt"] == "2027-01-18T10:45:00Z"  # end 11:30, EC2 from 11:00
    assert found.terminates_at - found.scale_down_at == plain.terminates_at - plain.scale_down_at
