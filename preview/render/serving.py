"""The serving table of the text preview (rows from ``preview/serving_summary.py``)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def _usd(v: float | None, digits: int = 2) -> str:
    return "unknown" if v is None else f"{v:,.{digits}f}"


def _replicas(n: int) -> str:
    return f"{n} replica" if n == 1 else f"{n} replicas"


def print_serving(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(
        title="Serving (per service: fit, SLO evidence, capacity at peak, price)",
        title_justify="left",
        header_style="bold",
    )
    for name in (
        "service",
        "model · pool",
        "replicas",
        "fits (GiB)",
        "req/s at max vs peak",
        "evidence",
        "$/h min · max",
        "$/M out tok at peak",
        "pool $/GPU-h",
    ):
        table.add_column(name)
    for r in rows:
        capacity = (
            "no evidence"
            if r["capacityAtMax"] is None
            else f"{r['capacityAtMax']:,g} vs {r['peakRequestsPerSecond']:,g}\n({r['requestsPerSecondPerReplica']:g}/replica)"
        )
        fits = "—" if r["neededGib"] is None else f"{r['neededGib']:g} of {r['budgetGib']:g}"
        evidence = (
            r["evidence"]
            if r["sloMargin"] is None
            else f"{r['evidence']}\nSLO {r['sloMargin']:.1%} above it"
            + (": LOW CONFIDENCE (the row's request shape, not yours)" if r["lowConfidence"] else "")
        )
        per_m = (
            "—"
            if r["usdPerMillionOutputTokens"] is None
            else f"{r['usdPerMillionOutputTokens']:.3f}\n({_replicas(r['replicasAtPeak'])})"
        )
        table.add_row(
            r["service"],
            f"{r['model']} {r['precision']}\n{r['pool']} ({r['gpu']})",
            f"{r['replicasMin']}-{r['replicasMax']} × {r['gpusPerReplica']} GPU\n{r['workload']}\n"
            f"ready ≤ {r['readyTimeoutS'] // 60} min",
            fits,
            capacity,
            evidence,
            f"{_usd(r['usdPerHourMin'])} · {_usd(r['usdPerHourMax'])}",
            per_m,
            _usd(r["usdPerGpuHour"], 3),
        )
    console.print(table)
    whole = sorted({r["pool"] for r in rows if r.get("poolBilledWhole")})
    if whole:
        pools = f"pool {whole[0]} is" if len(whole) == 1 else f"pools {', '.join(whole)} are"
        note = (
            f"note: {pools} billed whole (a reservation): $/h min · max is serving's attributed share; "
            "scaling serving down frees GPUs for training, not dollars"
        )
        console.print(Text(note, style="dim"))
