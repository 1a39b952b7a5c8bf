"""The what-if report as Markdown (a design doc or a PR comment)."""

from __future__ import annotations

from typing import Any

from whatif.compare import compare_markdown
from whatif.report.fleet import fleet_markdown
from whatif.report.formatting import hours, pct, range_line, simulated, usd


def render_markdown(report: dict[str, Any], chart: str | None = None) -> str:
    w = report["workload"]
    out = [
        f"## What-if: `{report['stack']}` ({report['scheduler']}) on `{w['name']}`",
        "",
        f"{w['jobs']} jobs ({w['kind']}), seed {report['seed']}, {simulated(report)}.",
        "",
    ]
    if report["neverStartable"]:
        out += [f"**{len(report['neverStartable'])} job(s) can never start:**", ""]
        out += [
            f"- `{n['job']}` (queue {n['queue']}, {n['gpus']:g} GPUs on {n['nodes']} node(s)): {n['reason']}"
            for n in report["neverStartable"][:20]
        ]
        out.append("")
    out += [
        "| pool | paid GPU-h | allocated GPU-h | utilization | idle GPU-h | idle $ | cost $ | $/GPU-h | "
        "$ per used GPU-h | lost GPU-h |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in [*report["pools"], {"pool": "**total**", **report["total"]}]:
        out.append(
            f"| {p['pool']} | {p['paidGpuHours']:,.0f} | {p['allocatedGpuHours']:,.0f} | "
            f"{pct(p['utilization'])} | {p['idleGpuHours']:,.0f} | {usd(p['idleCostUsd'])} | "
            f"{usd(p['costUsd'])} | {usd(p.get('usdPerGpuHour'))} | "
            f"{usd(p['effectiveUsdPerUsedGpuHour'])} | {p['lostGpuHours']:,.1f} |"
        )
    if report.get("fleet"):
        out += ["", *fleet_markdown(report)]
    for title, rows in (
        ("queue", {"all": report["waits"]["all"], **report["waits"]["byQueue"]}),
        ("job size", report["waits"]["bySize"]),
    ):
        out += [
            "",
            f"| wait by {title} | jobs | never started | mean | p50 | p95 | p99 |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        out += [
            f"| {k} | {v['jobs']} | {v['neverStarted']} | {hours(v['meanS'])} | {hours(v['p50S'])} | "
            f"{hours(v['p95S'])} | {hours(v['p99S'])} |"
            for k, v in rows.items()
        ]
    ttr = (report.get("timeToRunning") or {}).get("bySize")
    if ttr:
        out += ["", "| time to all pods running, by job size | jobs | p50 | p95 |", "|---|---:|---:|---:|"]
        out += [f"| {k} | {v['jobs']} | {hours(v['p50S'])} | {hours(v['p95S'])} |" for k, v in ttr.items()]
    cold = (report.get("timeToRunning") or {}).get("coldStartByPool") or {}
    if cold:
        out += ["", "Time to running on new nodes, largest gang per pool (low–high from the sourced bounds):", ""]
        out += [f"- {pool}: {range_line(r)}" for pool, r in cold.items()]
    out += ["", "| queue | weight share | used share | deviation |", "|---|---:|---:|---:|"]
    out += [
        f"| {r['queue']} | {pct(r['weightShare'])} | {pct(r['usedShare'])} | {100 * r['deviation']:+.1f} pts |"
        for r in report["fairShare"]
    ]
    pre = report["preemptions"]
    evicted = f" Pods-ready evictions: {pre['podsReadyEvictions']}." if pre.get("podsReadyEvictions") else ""
    out += [
        "",
        f"Preemptions and spot interruptions: {pre['count']}; GPU-hours lost: {pre['lostGpuHours']:,.1f}.{evicted}",
    ]
    out += [f"\n> **Warning:** {line}" for line in report.get("warnings", [])]
    out += ["", "Billing conventions:", "", *(f"- {line}" for line in report.get("billing", [])), ""]
    out += [f"- {n}" for n in w["notes"]]
    out += [f"- Trace licence: {a}" for a in w["attribution"]]
    if report.get("compare"):
        out += ["", *compare_markdown(report["compare"])]
    if chart:
        out += ["", f"![utilization, queue depth and wait CDF]({chart})"]
    return "\n".join(out) + "\n"
