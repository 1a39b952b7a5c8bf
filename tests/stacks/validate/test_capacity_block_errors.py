"""Capacity blocks and reservations: each row pins the exact message a user reads (config path, value, allowed, fix)
for the block's window against AWS's rules (length, 11:30 UTC end, no scheduled action in the past), its fee, its
size, and block-only settings on other pools. ``now`` is fixed, so results do not change with the calendar."""

from __future__ import annotations

import datetime as dt
import textwrap
from typing import Any

import pytest

from tests.support.spec.edit import edit
from tests.stacks.validate.test_fabric_errors import EKS, GKE
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

NOW = dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.timezone.utc)
WINDOW = {"start": "2026-12-14T11:30:00Z", "durationHours": 336}
BLOCK = {
    "type": "reservation",
    "reservation": "cr-0123456789abcdef1",
    "reservationKind": "capacity-block",
    "window": WINDOW,
    "upfrontFeeUsd": 42000.0,
}
EKS_BLOCK = edit(EKS, "nodePools[0].capacity", BLOCK)


def block(**changes: Any) -> dict[str, Any]:
    return edit(EKS, "nodePools[0].capacity", {**BLOCK, **changes})


def case(config: dict[str, Any], expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(config, textwrap.dedent(expected).strip("\n"), id=id)


def issues_of(config: dict[str, Any]) -> list[str]:
    try:
        _, warnings = load_spec(config, now=NOW)
    except SpecError as exc:
        return [str(i) for i in exc.issues]
    return [str(w) for w in warnings]


def test_a_declared_block_is_valid_without_warnings():
    spec, warnings = load_spec(EKS_BLOCK, now=NOW)
    assert warnings == [] and spec.node_pools[0].capacity.upfront_fee_usd == 42000.0


ISSUES = [
    case(
        block(window={"start": "2026-11-02T11:30:00Z", "durationHours": 24}),
        """
        error: gpu-cluster:nodePools[0].capacity.window: pool 'p5': the capacity block ended at 2026-11-03T11:30:00Z: EC2 launches no instances into an expired block
          received: '2026-11-03T11:30:00Z'
          allowed:  a window that ends after now (2026-12-03T09:00:00Z)
          fix:      declare the window of the block you hold now, or remove the pool""",
        id="ended",
    ),
    case(
        block(window={"start": "2026-12-02T11:30:00Z", "end": "2026-12-03T09:15:00Z"}),
        """
        error: gpu-cluster:nodePools[0].capacity.window: pool 'p5': the block ends at 2026-12-03T09:15:00Z, and its scale-down time (2026-12-03T08:30:00Z) has passed: Auto Scaling refuses scheduled actions in the past, and EC2 terminates the block's instances from 2026-12-03T08:45:00Z
          received: '2026-12-03T09:15:00Z'
          allowed:  a window that ends after 2026-12-03T09:45:00Z
          fix:      remove the pool, or declare the window of the next block""",
        id="past-scale-down",
    ),
    case(
        block(window={"start": "2026-12-02T11:30:00Z", "durationHours": 48}),
        """
        warning: gpu-cluster:nodePools[0].capacity.window.start: pool 'p5': the block started at 2026-12-02T11:30:00Z: no scale-up action is created (Auto Scaling refuses scheduled actions in the past), so the group keeps its current size; an existing stack already scaled up at the start
          received: '2026-12-02T11:30:00Z'
          allowed:  a start after now (2026-12-03T09:00:00Z)
          fix:      on a first deploy during the window, scale the group by hand (`aws eks update-nodegroup-config --scaling-config`) or let pending pods scale it""",
        id="started",
    ),
    case(
        block(window={"start": "2026-12-14T11:30:00Z", "durationHours": 4369}),
        """
        error: gpu-cluster:nodePools[0].capacity.window.durationHours: pool 'p5': longer than a capacity block can be
          received: 4369
          allowed:  at most 4368 hours (182 days)
          fix:      split the reservation into consecutive blocks (one pool per block)""",
        id="over-182-days",
    ),
    case(
        block(window={"start": "2026-12-14T11:30:00Z", "end": "2026-12-14T23:30:00Z"}),
        """
        warning: gpu-cluster:nodePools[0].capacity.window.end: pool 'p5': shorter than a day: AWS sells capacity blocks of 1-14 days (then 7-day steps up to 182); only a block bought to start today is cut short at 11:30 UTC
          received: 12
          allowed:  24 hours or more
          fix:      check the window against the block's StartDate and EndDate""",
        id="shorter-than-a-day",
    ),
    case(
        block(window={"start": "2026-12-14T11:30:00Z", "end": "2026-12-15T11:30:00-05:00"}),
        """
        warning: gpu-cluster:nodePools[0].capacity.window.end: pool 'p5': capacity blocks end at 11:30 UTC; this window ends at another time (a time-zone mistake?)
          received: '2026-12-15T16:30:00Z'
          allowed:  an end at 11:30:00Z
          fix:      copy EndDate from `aws ec2 describe-capacity-reservations`""",
        id="end-not-1130-utc",
    ),
    case(
        block(window={"start": "2026-12-14T11:30:00Z", "end": "2026-12-13T11:30:00Z"}),
        """
        error: gpu-cluster:nodePools[0].capacity.window.end: pool 'p5': the block ends before it starts
          received: '2026-12-13T11:30:00Z'
          allowed:  after 2026-12-14T11:30:00Z
          fix:      copy StartDate and EndDate from `aws ec2 describe-capacity-reservations`""",
        id="end-before-start",
    ),
    case(
        block(window={"start": "2026-12-14T11:30:00", "durationHours": 24}),
        """
        error: gpu-cluster:nodePools[0].capacity.window.start: pool 'p5': the time has no time zone
          received: '2026-12-14T11:30:00'
          allowed:  ISO 8601 with a zone, e.g. 2027-01-04T11:30:00Z
          fix:      append Z (UTC, as AWS shows block times) or an offset such as +01:00""",
        id="no-time-zone",
    ),
    case(
        block(window={"start": "2026-12-14T11:30:00Z", "durationHours": 24, "end": "2026-12-15T11:30:00Z"}),
        """
        error: gpu-cluster:nodePools[0].capacity.window: pool 'p5': give the block's end or its length, exactly one of them
          received: {"durationHours": 24, "end": "2026-12-15T11:30:00+00:00"}
          allowed:  durationHours or end
          fix:      keep one of durationHours and end""",
        id="both-end-and-length",
    ),
    case(
        block(upfrontFeeUsd=None),
        """
        warning: gpu-cluster:nodePools[0].capacity.upfrontFeeUsd: pool 'p5': the capacity block's cost is unknown: the preview cannot price it and the cost-stack-budget policy fails closed
          allowed:  the upfront fee paid, in USD
          fix:      add capacity.upfrontFeeUsd (UpfrontFee of the offering you bought, from `aws ec2 describe-capacity-block-offerings` or the bill)""",
        id="no-fee",
    ),
    case(
        block(window=None),
        """
        warning: gpu-cluster:nodePools[0].capacity.window: pool 'p5': a capacity block without its window gets no schedule: the node group stays at 0 nodes until pods ask the Cluster Autoscaler for them, and nothing scales it down before the block ends
          allowed:  start and durationHours (or end)
          fix:      add capacity.window from `aws ec2 describe-capacity-reservations --capacity-reservation-ids cr-0123456789abcdef1` (StartDate, EndDate)""",
        id="no-window",
    ),
    case(
        block(reservedNodes=65),
        """
        error: gpu-cluster:nodePools[0].capacity.reservedNodes: pool 'p5': more instances than one capacity block holds
          received: 65
          allowed:  1-64
          fix:      split the capacity into several blocks and pools""",
        id="block-over-64",
    ),
    case(
        block(reservedNodes=2),
        """
        warning: gpu-cluster:nodePools[0].capacity.reservedNodes: pool 'p5': maxNodes (4) is above the block's size: instances beyond it cannot launch
          received: 2
          allowed:  at least maxNodes (4)
          fix:      set maxNodes to 2, or reservedNodes to the block's real size""",
        id="max-above-block",
    ),
    case(
        edit(
            EKS,
            "nodePools[0].capacity",
            {"type": "reservation", "reservation": "cr-0123456789abcdef1", "upfrontFeeUsd": 100.0},
        ),
        """
        error: gpu-cluster:nodePools[0].capacity.upfrontFeeUsd: pool 'p5': upfrontFeeUsd describes an EC2 Capacity Block, and this pool is not one
          allowed:  type: reservation with reservationKind: capacity-block (EKS)
          fix:      remove capacity.upfrontFeeUsd, or set reservationKind: capacity-block""",
        id="fee-on-odcr",
    ),
    case(
        edit(GKE, "nodePools[0].capacity", {"type": "reservation", "reservation": "res-a3", "window": WINDOW}),
        """
        error: gpu-cluster:nodePools[0].capacity.window: pool 'mega': window describes an EC2 Capacity Block, and this pool is not one
          allowed:  type: reservation with reservationKind: capacity-block (EKS)
          fix:      remove capacity.window, or set reservationKind: capacity-block""",
        id="window-on-gke",
    ),
    case(
        edit(EKS, "nodePools[0].capacity", {"type": "on-demand", "reservedNodes": 2}),
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'p5': reservation settings are given but capacity.type is on-demand
          received: 'on-demand'
          allowed:  reservation
          fix:      set capacity.type: reservation, or drop the reservation fields (spot nodes cannot consume a reservation)""",
        id="reserved-nodes-on-demand",
    ),
]


@pytest.mark.parametrize("config, expected", ISSUES)
def test_exact_message(config, expected):
    assert expected in issues_of(config)


def test_a_started_block_of_an_imex_pool_asks_for_a_manual_scale_up_not_pending_pods():
    """IMEX-claiming (DRA) pods cannot make the autoscaler scale a group from zero: the fix must not suggest it."""
    from tests.stacks.validate.test_nvlink_errors import P6E

    started = edit(P6E, "nodePools[0].capacity.window", {"start": "2026-12-02T11:30:00Z", "durationHours": 48})
    (warning,) = [i for i in issues_of(started) if ".capacity.window.start:" in i]
    assert "scale the group by hand (`aws eks update-nodegroup-config --scaling-config`) to the block's size" in warning
    assert "let pending pods scale it" not in warning
    assert "pending pods cannot scale it: the Cluster Autoscaler's AWS scale-from-zero node template" in warning
    # a pool without IMEX claims keeps the autoscaler option
    (plain,) = [i for i in issues_of(block(window=started["nodePools"][0]["capacity"]["window"])) if "started" in i]
    assert "or let pending pods scale it" in plain
