"""Numbers for people, shared by every renderer (text, Markdown, the --vs comparison): times, percentages, dollars."""

from __future__ import annotations

from typing import Any


def hours(seconds: float | None) -> str:
    """A wait for people: 42 s, 12 min, 3.4 h, 2.1 d."""
    if seconds is None:
        return "–"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def simulated(report: dict[str, Any]) -> str:
    """How long the run went, and what cut it short with work left (billed as a horizon cut)."""
    out = f"{report['horizonHours']:.1f} h simulated"
    if report.get("cutBy"):
        out += f", cut by {report['cutBy']} with {report['unfinished']} job(s) unfinished"
    return out


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def usd(x: float | None) -> str:
    return "–" if x is None else f"{x:,.2f}"


def show(value: Any, kind: str, signed: bool = False) -> str:
    if value is None:
        return "–"
    sign = "+" if signed and value > 0 else ("-" if signed and value < 0 else "")
    v = abs(value) if signed else value
    if kind == "pct":
        return f"{sign}{100 * v:.1f} {'pts' if signed else '%'}"
    if kind == "usd":
        return sign + usd(v)
    if kind == "time":
        return sign + hours(v)
    return f"{sign}{v:,.1f}" if isinstance(v, float) else f"{sign}{v}"


def _start(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def range_line(r: dict[str, Any]) -> str:
    """A pool's cold time to running: ``64 pods: 5.1–23.1 min (typical 9.4 min)``, low–high from the sourced bounds
    of catalog/data/start-path.csv (one figure where no source gives a range)."""
    pods = f"{r['pods']} pod{'s' if r['pods'] != 1 else ''}"
    if r["low"] == r["high"]:
        return f"{pods}: {_start(r['typical'])}"
    return f"{pods}: {_start(r['low'])}–{_start(r['high'])} (typical {_start(r['typical'])})"
