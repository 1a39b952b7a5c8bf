"""The rows of the catalog's regional CSV files, and the one way to write a file: temp file + rename, so a failed
refresh leaves the existing catalog untouched."""

from __future__ import annotations

import csv
import datetime as dt
import os
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Iterable


@dataclass(frozen=True)
class PriceRow:
    cloud: str
    machine_type: str
    """A machine type, an N1 host, a system-pool type or an attachable GPU (``nvidia-tesla-t4``, per GPU)."""
    region: str
    capacity: str
    """``on-demand`` or ``spot``."""
    usd_per_hour: float
    as_of: dt.date
    label: str
    source: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.cloud, self.machine_type, self.region, self.capacity)


@dataclass(frozen=True)
class RegionRow:
    cloud: str
    region: str
    zones: str
    zone_ids: str
    """AWS: the account-independent AZ IDs (``use1-az1``); empty for GCP, whose zone names are global."""
    source: str


@dataclass(frozen=True)
class ZoneRow:
    cloud: str
    machine_type: str
    """A machine type, or an attachable GPU for N1 pools."""
    zones: str
    as_of: dt.date
    source: str


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def write_rows(path: Path, rows: Iterable[Any], row_type: type) -> None:
    """Write ``rows`` as CSV to ``path`` atomically (a temp file in the same folder, then ``os.replace``)."""
    names = [f.name for f in fields(row_type)]
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=names, lineterminator="\n")
            writer.writeheader()
            for row in rows:
                writer.writerow({k: _cell(v) for k, v in asdict(row).items()})
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_prices(path: Path) -> list[PriceRow]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [
            PriceRow(
                cloud=r["cloud"],
                machine_type=r["machine_type"],
                region=r["region"],
                capacity=r["capacity"],
                usd_per_hour=float(r["usd_per_hour"]),
                as_of=dt.date.fromisoformat(r["as_of"]),
                label=r["label"],
                source=r["source"],
            )
            for r in csv.DictReader(fh)
        ]
