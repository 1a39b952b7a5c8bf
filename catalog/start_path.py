"""What a job's pods wait for between admission and running, beyond the node itself (``data/start-path.csv``): image
pull rates and what image streaming, a secondary boot disk and SOCI change, the pod start SLO, scheduler and Kueue
throughput, ComputeDomain start. Each factor is sourced, derived from a source, or a labelled assumption; the node
provisioning delay is ``provisioning.py``'s. Read by the preview's pod start table and the what-if."""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

START_PATH_CSV = Path(__file__).parent / "data" / "start-path.csv"
KINDS = ("sourced", "derived", "assumption")


@dataclass(frozen=True)
class StartFactor:
    name: str
    value: float
    unit: str
    kind: str
    """sourced (a published figure), derived (arithmetic on one), or assumption (none published: override it)."""
    source: str


@functools.lru_cache(maxsize=1)
def load_start_path() -> dict[str, StartFactor]:
    with open(START_PATH_CSV, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = {r["factor"]: StartFactor(r["factor"], float(r["value"]), r["unit"], r["kind"], r["source"]) for r in rows}
    bad = sorted(f.name for f in out.values() if f.kind not in KINDS or not f.source)
    if bad:
        raise ValueError(f"{START_PATH_CSV.name}: factors without a kind in {KINDS} or a source: {bad}")
    return out
