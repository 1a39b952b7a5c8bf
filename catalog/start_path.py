"""What a job's pods wait for between admission and running, beyond the node itself (``data/start-path.csv``): image
pull rates and what image streaming, a secondary boot disk and SOCI change, the pod start SLO, scheduler and Kueue
throughput, ComputeDomain start. Each factor is sourced, derived from a source, or a labelled assumption; the node
provisioning delay is ``provisioning.py``'s. Each factor also has a low and a high value, each with its own source;
where no source gives a bound, the bound is the typical value and its source says ``NO_RANGE`` (never an invented
spread). Read by the preview's pod start table and the what-if."""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

START_PATH_CSV = Path(__file__).parent / "data" / "start-path.csv"
KINDS = ("sourced", "derived", "assumption")
NO_RANGE = "no source for a range"


@dataclass(frozen=True)
class StartFactor:
    name: str
    value: float
    unit: str
    kind: str
    """sourced (a published figure), derived (arithmetic on one), or assumption (none published: override it)."""
    source: str
    low: float
    """The lowest value a source gives (``value`` where none does)."""
    high: float
    low_source: str
    high_source: str


def range_problems(f: StartFactor) -> list[str]:
    """What is wrong with a factor's bounds: out of order, a bound without a source, or a spread with none."""
    out = []
    if not f.low <= f.value <= f.high:
        out.append(f"{f.name}: low {f.low:g} <= value {f.value:g} <= high {f.high:g} does not hold")
    for side, bound, source in (("low", f.low, f.low_source), ("high", f.high, f.high_source)):
        if not source:
            out.append(f"{f.name}: {side}_source is empty (a source, or '{NO_RANGE}' with {side} = value)")
        elif source == NO_RANGE and bound != f.value:
            out.append(f"{f.name}: {side} {bound:g} differs from the value but its source says '{NO_RANGE}'")
    return out


@functools.lru_cache(maxsize=1)
def load_start_path() -> dict[str, StartFactor]:
    with open(START_PATH_CSV, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = {
        r["factor"]: StartFactor(
            r["factor"],
            float(r["value"]),
            r["unit"],
            r["kind"],
            r["source"],
            float(r["low"]),
            float(r["high"]),
            r["low_source"],
            r["high_source"],
        )
        for r in rows
    }
    bad = sorted(f.name for f in out.values() if f.kind not in KINDS or not f.source)
    if bad:
        raise ValueError(f"{START_PATH_CSV.name}: factors without a kind in {KINDS} or a source: {bad}")
    problems = [p for f in out.values() for p in range_problems(f)]
    if problems:
        raise ValueError(f"{START_PATH_CSV.name}: " + "; ".join(problems))
    return out
