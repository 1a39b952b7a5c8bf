"""Capacity blocks in the preview: each block's window, what it costs over it, and the Auto Scaling actions the
program recorded on its node group (an action whose time has passed is not created, and says so)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from preview.cost import usd
from preview.report import PreviewReport

SCHEDULE = "aws:autoscaling/schedule:Schedule"
ROLES = ("scale-up", "scale-down")


def capacity_blocks(report: PreviewReport) -> list[dict[str, Any]]:
    """One row per capacity-block pool: window, fee and prices, and per action its time and sizes, or None when the
    program created no action (no window, or its time has passed)."""
    if report.cost is None:
        return []
    recorded = {r.name: r.inputs for r in report.resources if r.type == SCHEDULE}
    rows = []
    for p in report.cost.pools:
        if p.capacity != "capacity-block" or p.block is None:
            continue
        actions = {role: recorded.get(f"{p.pool}-{role}") for role in ROLES}
        rows.append(
            {
                "pool": p.pool,
                "window": {k: v for k, v in p.block.items() if k != "usdTotal"} or None,
                "usdTotal": p.block.get("usdTotal"),
                "usdPerNodeHour": p.usd_per_node_hour,
                "usdPerGpuHour": p.usd_per_gpu_hour,
                "reservedNodes": p.reserved_nodes,
                "schedule": {
                    role: None
                    if a is None
                    else {
                        "at": a.get("startTime"),
                        "minSize": a.get("minSize"),
                        "maxSize": a.get("maxSize"),
                        "desiredCapacity": a.get("desiredCapacity"),
                    }
                    for role, a in actions.items()
                },
            }
        )
    return rows


def _action(a: dict[str, Any] | None, planned: str | None) -> str:
    if a is None:
        return "none (no window)" if planned is None else f"none: {planned} has passed"
    return f"{a['at']} → min {_n(a['minSize'])} / desired {_n(a['desiredCapacity'])} / max {_n(a['maxSize'])}"


def _n(value: Any) -> str:
    return str(int(value)) if isinstance(value, (int, float)) else "?"


def _lines(row: dict[str, Any]) -> tuple[str, str, str, str]:
    w = row["window"]
    window = f"{w['start']} → {w['end']} ({w['hours']:g} h)" if w else "not declared"
    total = "unknown (no upfrontFeeUsd)" if row["usdTotal"] is None else f"${row['usdTotal']:,.2f}"
    up = _action(row["schedule"]["scale-up"], w and w["scaleUpAt"])
    down = _action(row["schedule"]["scale-down"], w and w["scaleDownAt"])
    return window, total, up, down


def print_capacity_blocks(console: Console, report: PreviewReport) -> None:
    rows = capacity_blocks(report)
    if not rows:
        return
    console.print()
    table = Table(
        title="Capacity blocks (paid up front for the window, whether nodes run or not)",
        title_justify="left",
        header_style="bold",
    )
    for name in ("pool", "window (UTC)", "block total", "$/node-h", "$/GPU-h", "scale up", "scale to 0"):
        table.add_column(name, no_wrap=name not in ("scale up", "scale to 0"))
    for row in rows:
        window, total, up, down = _lines(row)
        table.add_row(row["pool"], window, total, usd(row["usdPerNodeHour"]), usd(row["usdPerGpuHour"], 3), up, down)
    console.print(table)
    console.print(
        Text("scale to 0 is 30 minutes before the block ends: EC2 starts terminating its instances then", style="dim")
    )


def markdown_capacity_blocks(report: PreviewReport) -> list[str]:
    rows = capacity_blocks(report)
    if not rows:
        return []
    out = [
        "**Capacity blocks** (paid up front for the window, whether nodes run or not)",
        "",
        "| pool | window (UTC) | block total | $/node-h | $/GPU-h | scale up | scale to 0 |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        window, total, up, down = _lines(row)
        out.append(
            f"| {row['pool']} | {window} | {total} | {usd(row['usdPerNodeHour'])} | "
            f"{usd(row['usdPerGpuHour'], 3)} | {up} | {down} |"
        )
    return out + [""]
