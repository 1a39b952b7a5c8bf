"""The fleet part of a what-if report (a MultiKueue manager's run): per worker and fleet utilization, waits and $ per
used GPU-hour, for the terminal and Markdown."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from whatif.report.formatting import hours, pct, usd


def _rows(report: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    fleet = report["fleet"]
    rows = [(f"{w['worker']} ({w['stack']})", w, w["waits"]) for w in fleet["workers"]]
    return rows + [("fleet", report["total"], report["waits"]["all"])]


def _title(report: dict[str, Any]) -> str:
    f = report["fleet"]
    step = f", {f['stepSize']} at a time" if f["dispatcher"] == "Incremental" else ""
    return f"Fleet: MultiKueue {f['dispatcher']}{step} over {', '.join(w['worker'] for w in f['workers'])}"


def _loss(report: dict[str, Any]) -> str | None:
    """The declared outages and what they cost: the jobs evicted once ``workerLostTimeout`` passed."""
    loss = report["fleet"].get("workerLoss")
    if not loss:
        return None
    spans = ", ".join(f"{o['worker']} from {o['atS']:g} s for {o['forS']:g} s" for o in loss["outages"])
    return (
        f"Workers lost: {spans}; workerLostTimeout {loss['workerLostTimeoutS']:g} s; "
        f"{loss['jobsEvicted']} job(s) evicted and requeued (their lost work is in the preemptions)"
    )


def fleet_table(report: dict[str, Any]) -> Table:
    t = Table(title=_title(report), caption=_loss(report))
    for col in ("cluster", "jobs run", "utilization", "cost $", "$ per used GPU-h", "p50 wait", "p95 wait"):
        t.add_column(col, justify="left" if col == "cluster" else "right")
    for name, money, waits in _rows(report):
        t.add_row(
            name,
            str(waits["started"]),
            pct(money["utilization"]),
            usd(money["costUsd"]),
            usd(money["effectiveUsdPerUsedGpuHour"]),
            hours(waits["p50S"]),
            hours(waits["p95S"]),
        )
    return t


def fleet_markdown(report: dict[str, Any]) -> list[str]:
    out = [
        f"**{_title(report)}**",
        "",
        "| cluster | jobs run | utilization | cost $ | $ per used GPU-h | p50 wait | p95 wait |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    out += [
        f"| {name} | {waits['started']} | {pct(money['utilization'])} | {usd(money['costUsd'])} | "
        f"{usd(money['effectiveUsdPerUsedGpuHour'])} | {hours(waits['p50S'])} | {hours(waits['p95S'])} |"
        for name, money, waits in _rows(report)
    ]
    loss = _loss(report)
    return out + ([""] + [loss] if loss else []) + [""]
