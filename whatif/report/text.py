"""The what-if report as rich tables (the CLI's default format)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table

from whatif.compare import compare_table
from whatif.report.fleet import fleet_table
from whatif.report.formatting import hours, pct, range_line, simulated, usd


def money_table(report: dict[str, Any]) -> Table:
    t = Table(
        title="Utilization and cost of the GPU pools (allocated / paid GPU-hours; $/GPU-h as billed: a capacity "
        "block's fee, a priceOverride, else the catalog list price)"
    )
    for col in (
        "pool",
        "paid GPU-h",
        "allocated GPU-h",
        "utilization",
        "idle GPU-h",
        "idle $",
        "cost $",
        "$/GPU-h",
        "$ per used GPU-h",
        "lost GPU-h",
    ):
        t.add_column(col, justify="left" if col == "pool" else "right")
    for p in [*report["pools"], {"pool": "total", **report["total"]}]:
        t.add_row(
            p["pool"],
            f"{p['paidGpuHours']:,.0f}",
            f"{p['allocatedGpuHours']:,.0f}",
            pct(p["utilization"]),
            f"{p['idleGpuHours']:,.0f}",
            usd(p["idleCostUsd"]),
            usd(p["costUsd"]),
            usd(p.get("usdPerGpuHour")),
            usd(p["effectiveUsdPerUsedGpuHour"]),
            f"{p['lostGpuHours']:,.1f}",
        )
    return t


def wait_table(title: str, rows: dict[str, dict[str, Any]]) -> Table:
    t = Table(title=title)
    for col in ("", "jobs", "never started", "mean", "p50", "p95", "p99"):
        t.add_column(col, justify="left" if not col else "right")
    for name, w in rows.items():
        t.add_row(
            name,
            str(w["jobs"]),
            str(w["neverStarted"]),
            hours(w["meanS"]),
            hours(w["p50S"]),
            hours(w["p95S"]),
            hours(w["p99S"]),
        )
    return t


def running_table(rows: dict[str, dict[str, Any]]) -> Table:
    t = Table(title="Time to all pods running per job size (queue wait + image pull + pod start)")
    for col in ("", "jobs", "p50", "p95"):
        t.add_column(col, justify="left" if not col else "right")
    for name, r in rows.items():
        t.add_row(name, str(r["jobs"]), hours(r["p50S"]), hours(r["p95S"]))
    return t


def fair_table(rows: list[dict[str, Any]]) -> Table:
    t = Table(title="Fair share: each queue's share of used GPU-hours vs its weight")
    for col in ("queue", "weight", "weight share", "used share", "used GPU-h", "deviation"):
        t.add_column(col, justify="left" if col == "queue" else "right")
    for r in rows:
        t.add_row(
            r["queue"],
            str(r["weight"]),
            pct(r["weightShare"]),
            pct(r["usedShare"]),
            f"{r['usedGpuHours']:,.0f}",
            f"{100 * r['deviation']:+.1f} pts",
        )
    return t


def render_text(report: dict[str, Any], color: bool | None = None) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf, width=160, force_terminal=bool(color), color_system="standard" if color else None, no_color=not color
    )
    w = report["workload"]
    console.print(
        f"What-if: stack {report['stack']} ({report['scheduler']}), workload {w['name']} ({w['kind']}, "
        f"{w['jobs']} jobs), seed {report['seed']}, {simulated(report)}"
    )
    if report["neverStartable"]:
        console.print(f"[bold]{len(report['neverStartable'])} job(s) can never start on this stack:[/bold]")
        for n in report["neverStartable"][:20]:
            console.print(
                f"  {n['job']} (queue {n['queue']}, {n['gpus']:g} GPUs on {n['nodes']} node(s)): {n['reason']}"
            )
        if len(report["neverStartable"]) > 20:
            console.print(f"  … and {len(report['neverStartable']) - 20} more (see --format json)")
    console.print(money_table(report))
    if report.get("fleet"):
        console.print(fleet_table(report))
    console.print(wait_table("Queue wait per queue", {"all": report["waits"]["all"], **report["waits"]["byQueue"]}))
    console.print(wait_table("Queue wait per job size", report["waits"]["bySize"]))
    ttr = report.get("timeToRunning") or {}
    if ttr.get("bySize"):
        console.print(running_table(ttr["bySize"]))
    for pool, r in (ttr.get("coldStartByPool") or {}).items():
        console.print(f"time to running, cold, largest gang of pool {pool}: {range_line(r)}", highlight=False)
    console.print(fair_table(report["fairShare"]))
    pre = report["preemptions"]
    console.print(
        f"preemptions and spot interruptions: {pre['count']}, GPU-hours lost: {pre['lostGpuHours']:,.1f}; "
        + (f"pods-ready evictions: {pre['podsReadyEvictions']}; " if pre.get("podsReadyEvictions") else "")
        + f"jobs still queued or running at the end: {report['unfinished']}"
    )
    for line in report.get("warnings", []):
        console.print(f"[bold red]WARNING:[/] {line}", highlight=False)
    for line in report.get("billing", []):
        console.print(f"billing: {line}", highlight=False)
    for line in [*w["notes"], *(f"trace licence: {a}" for a in w["attribution"])]:
        console.print(f"note: {line}", highlight=False)
    if report.get("compare"):
        console.print(compare_table(report["compare"]))
    return buf.getvalue()
