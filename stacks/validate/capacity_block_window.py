"""An EC2 Capacity Block pool: the block's size, window and fee against AWS's rules (durations, the 11:30 UTC end, no
scheduled action in the past). See ``stacks/plan/capacity_block.py`` for the sources. Called by
``stacks/validate/capacity_block.py`` for capacity-block pools only, so other stacks never load the block's planner.

``now`` is the moment of the check (UTC); ``load_spec`` passes the clock, tests a fixed time.
"""

from __future__ import annotations

import datetime as dt

from catalog.cloud_limits import cloud_limit
from stacks.plan.capacity_block import (
    BlockWindow,
    BLOCK_END_UTC,
    MAX_BLOCK_HOURS,
    MAX_BLOCK_INSTANCES,
    MIN_BLOCK_HOURS,
    block_window,
    iso,
)
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues


def check_block(capacity: Issues, pool: NodePool, now: dt.datetime, dra: bool = False) -> None:
    """One EC2 Capacity Block pool (``capacity``: its ``capacity`` scope). ``dra``: the pool's job pods claim a DRA
    device (an IMEX channel), so pending pods cannot make the Cluster Autoscaler scale it up from zero."""
    cap = pool.capacity
    _check_size(capacity, pool)
    if cap.window is None:
        capacity.warn(
            "window",
            "a capacity block without its window gets no schedule: the node group stays at "
            "0 nodes until pods ask the Cluster Autoscaler for them, and nothing scales it down before "
            "the block ends",
            allowed="start and durationHours (or end)",
            fix="add capacity.window from `aws ec2 describe-capacity-reservations "
            f"--capacity-reservation-ids {cap.reservation}` (StartDate, EndDate)",
        )
    else:
        _check_window(capacity.at("window"), pool, now, dra)
    if cap.upfront_fee_usd is None:
        capacity.warn(
            "upfrontFeeUsd",
            "the capacity block's cost is unknown: the preview cannot price it and "
            "the cost-stack-budget policy fails closed",
            allowed="the upfront fee paid, in USD",
            fix="add capacity.upfrontFeeUsd (UpfrontFee of the offering you bought, from `aws ec2 "
            "describe-capacity-block-offerings` or the bill)",
        )


def _check_size(capacity: Issues, pool: NodePool) -> None:
    reserved = pool.capacity.reserved_nodes
    if reserved is not None and reserved > MAX_BLOCK_INSTANCES:
        capacity.error(
            "reservedNodes",
            "more instances than one capacity block holds",
            reserved,
            allowed=f"1-{MAX_BLOCK_INSTANCES}",
            fix="split the capacity into several blocks and pools",
        )
    if reserved is not None and pool.max_nodes > reserved:
        capacity.warn(
            "reservedNodes",
            f"maxNodes ({pool.max_nodes}) is above the block's size: instances beyond it cannot launch",
            reserved,
            allowed=f"at least maxNodes ({pool.max_nodes})",
            fix=f"set maxNodes to {reserved}, or reservedNodes to the block's real size",
        )


def _check_window(window: Issues, pool: NodePool, now: dt.datetime, dra: bool) -> None:
    spec = pool.capacity.window
    assert spec is not None
    naive = [
        key
        for key, moment in (("start", spec.start), ("end", spec.end))
        if moment is not None and moment.tzinfo is None
    ]
    for key in naive:
        window.error(
            key,
            "the time has no time zone",
            getattr(spec, key).isoformat(),
            allowed="ISO 8601 with a zone, e.g. 2027-01-04T11:30:00Z",
            fix="append Z (UTC, as AWS shows block times) or an offset such as +01:00",
        )
    if (spec.end is None) == (spec.duration_hours is None):
        window.error(
            None,
            "give the block's end or its length, exactly one of them",
            {
                k: v
                for k, v in (("durationHours", spec.duration_hours), ("end", spec.end and spec.end.isoformat()))
                if v is not None
            }
            or None,
            allowed="durationHours or end",
            fix="keep one of durationHours and end",
        )
        return
    if spec.duration_hours is not None and spec.duration_hours > MAX_BLOCK_HOURS:
        _check_length(window, "durationHours", spec.duration_hours)
        return
    found = block_window(pool)
    if not naive and found is None:
        window.error(
            "durationHours",
            "the window ends past the year 9999",
            spec.duration_hours,
            allowed="a window that ends before 9999-12-31",
            fix="copy StartDate and EndDate from `aws ec2 describe-capacity-reservations`",
        )
    if naive or found is None:
        return
    key = "end" if spec.end is not None else "durationHours"
    if found.end <= found.start:
        window.error(
            key,
            "the block ends before it starts",
            iso(found.end),
            allowed=f"after {iso(found.start)}",
            fix="copy StartDate and EndDate from `aws ec2 describe-capacity-reservations`",
        )
        return
    _check_length(window, key, found.hours)
    if found.end.astimezone(dt.timezone.utc).timetz().replace(tzinfo=None) != BLOCK_END_UTC:
        window.warn(
            key,
            "capacity blocks end at 11:30 UTC; this window ends at another time (a time-zone mistake?)",
            iso(found.end),
            allowed="an end at 11:30:00Z",
            fix="copy EndDate from `aws ec2 describe-capacity-reservations`",
        )
    _check_against_now(window, found, now, dra)


def _check_length(window: Issues, key: str, hours: float) -> None:
    shown = int(hours) if hours == int(hours) else round(hours, 2)
    if hours > MAX_BLOCK_HOURS:
        window.error(
            key,
            "longer than a capacity block can be",
            shown,
            allowed=f"at most {MAX_BLOCK_HOURS} hours (182 days)",
            fix="split the reservation into consecutive blocks (one pool per block)",
        )
    elif hours < MIN_BLOCK_HOURS:
        window.warn(
            key,
            "shorter than a day: AWS sells capacity blocks of 1-14 days (then 7-day steps up to 182); "
            "only a block bought to start today is cut short at 11:30 UTC",
            shown,
            allowed=f"{MIN_BLOCK_HOURS} hours or more",
            fix="check the window against the block's StartDate and EndDate",
        )


def _check_against_now(window: Issues, found: BlockWindow, now: dt.datetime, dra: bool) -> None:
    start, end, scale_down = found.start, found.end, found.scale_down_at
    if end <= now:
        window.error(
            None,
            f"the capacity block ended at {iso(end)}: EC2 launches no instances into an expired block",
            iso(end),
            allowed=f"a window that ends after now ({iso(now)})",
            fix="declare the window of the block you hold now, or remove the pool",
        )
    elif scale_down <= now:
        window.error(
            None,
            f"the block ends at {iso(end)}, and its scale-down time ({iso(scale_down)}) has passed: "
            "Auto Scaling refuses scheduled actions in the past, and EC2 terminates the block's instances from "
            f"{iso(found.terminates_at)}",
            iso(end),
            allowed=f"a window that ends after {iso(now + (end - scale_down))}",
            fix="remove the pool, or declare the window of the next block",
        )
    elif start <= now:
        window.warn(
            "start",
            f"the block started at {iso(start)}: no scale-up action is created (Auto Scaling "
            "refuses scheduled actions in the past), so the group keeps its current size; an existing "
            "stack already scaled up at the start",
            iso(start),
            allowed=f"a start after now ({iso(now)})",
            fix="on a first deploy during the window, scale the group by hand (`aws eks "
            "update-nodegroup-config --scaling-config`)"
            # the autoscaler's scale-from-zero template has no ResourceSlices, so IMEX-claiming pods never scale it
            + (
                " to the block's size; pending pods cannot scale it: "
                + cloud_limit("autoscaler-aws-scale-from-zero-dra").limit
                if dra
                else " or let pending pods scale it"
            ),
        )
