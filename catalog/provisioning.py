"""How long a GPU node takes to join after the autoscaler asks for it, and how often spot nodes are taken back, per
cloud and capacity type (``data/provisioning.csv``, each row with its source). Read by the what-if simulator."""

from __future__ import annotations

import csv
import datetime as dt
import functools
from dataclasses import dataclass
from pathlib import Path

from catalog.models import CapacityType, Cloud

PROVISIONING_CSV = Path(__file__).parent / "data" / "provisioning.csv"


@dataclass(frozen=True)
class Provisioning:
    cloud: Cloud
    capacity: CapacityType
    provision_seconds: int
    """From the autoscaler's request to a node that accepts GPU pods (billing starts at the request)."""
    spot_interruptions_per_node_month: float
    """Expected reclaims per node and 30-day month (0 for capacity that is not reclaimed)."""
    as_of: dt.date
    source: str
    low_seconds: int = 0
    """The fastest provisioning a source gives (``provision_low_source``)."""
    high_seconds: int = 0
    """The slowest provisioning a source gives (``provision_high_source``)."""
    low_source: str = ""
    high_source: str = ""


@functools.lru_cache(maxsize=1)
def load_provisioning() -> dict[tuple[Cloud, CapacityType], Provisioning]:
    with open(PROVISIONING_CSV, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = {}
    for r in rows:
        item = Provisioning(
            Cloud(r["cloud"]),
            CapacityType(r["capacity"]),
            int(r["provision_seconds"]),
            float(r["spot_interruptions_per_node_month"]),
            dt.date.fromisoformat(r["as_of"]),
            r["source"],
            int(r["provision_low_seconds"]),
            int(r["provision_high_seconds"]),
            r["provision_low_source"],
            r["provision_high_source"],
        )
        out[(item.cloud, item.capacity)] = item
    return out
