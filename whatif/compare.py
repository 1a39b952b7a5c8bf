"""``--vs STACK``: the same workload through two configs, and the differences a reviewer acts on ("p95 wait of
research goes from 12 min to 3 h", "$ per used GPU-hour from 4.10 to 3.20")."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from whatif.report.formatting import show


def compare(base: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Rows of (what, base value, other value, kind); kind tells the renderers how to print them."""
    rows: list[dict[str, Any]] = []

    def add(what: str, a: Any, b: Any, kind: str) -> None:
        delta = None if a is None or b is None else b - a
        rows.append({"what": what, "base": a, "vs": b, "delta": delta, "kind": kind})

    bt, ot = base["total"], other["total"]
    add("utilization (allocated / paid)", bt["utilization"], ot["utilization"], "pct")
    add("cost $", bt["costUsd"], ot["costUsd"], "usd")
    add("idle paid GPU-hours cost $", bt["idleCostUsd"], ot["idleCostUsd"], "usd")
    add("effective $ per used GPU-hour", bt["effectiveUsdPerUsedGpuHour"], ot["effectiveUsdPerUsedGpuHour"], "usd")
    add("GPU-hours lost to preemption", bt["lostGpuHours"], ot["lostGpuHours"], "num")
    for q in sorted(set(base["waits"]["byQueue"]) | set(other["waits"]["byQueue"])):
        a, b = base["waits"]["byQueue"].get(q, {}), other["waits"]["byQueue"].get(q, {})
        for stat in ("p50S", "p95S"):
            add(f"{q}: {stat[:3]} wait", a.get(stat), b.get(stat), "time")
    add("jobs that can never start", len(base["neverStartable"]), len(other["neverStartable"]), "num")
    return {"base": base["stack"], "vs": other["stack"], "rows": rows}


def compare_table(c: dict[str, Any]) -> Table:
    t = Table(title=f"Compared: {c['base']} → {c['vs']} (same workload, same seed)")
    for col in ("", c["base"], c["vs"], "change"):
        t.add_column(col, justify="left" if not col else "right")
    for r in c["rows"]:
        t.add_row(r["what"], show(r["base"], r["kind"]), show(r["vs"], r["kind"]), show(r["delta"], r["kind"], True))
    return t


def compare_markdown(c: dict[str, Any]) -> list[str]:
    lines = [
        f"### Compared: `{c['base']}` → `{c['vs']}`",
        "",
        f"| | {c['base']} | {c['vs']} | change |",
        "|---|---:|---:|---:|",
    ]
    for r in c["rows"]:
        lines.append(
            f"| {r['what']} | {show(r['base'], r['kind'])} | {show(r['vs'], r['kind'])} | "
            f"{show(r['delta'], r['kind'], True)} |"
        )
    return lines


__all__ = ["compare", "compare_table", "compare_markdown"]
