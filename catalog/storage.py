"""Local SSDs that come with a machine type (GKE can back the node's ephemeral storage with them). Pure data from
``catalog/data/local-ssds.csv``; no Pulumi imports."""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from catalog.loader import DATA_DIR
from catalog.models import Cloud


@dataclass(frozen=True)
class LocalSsds:
    cloud: Cloud
    machine_type: str
    count: int
    gib_each: int
    source: str

    @property
    def total_gib(self) -> int:
        return self.count * self.gib_each


@functools.cache
def load_local_ssds() -> dict[tuple[Cloud, str], LocalSsds]:
    with open(DATA_DIR / "local-ssds.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return {
        (Cloud(r["cloud"]), r["machine_type"]): LocalSsds(
            cloud=Cloud(r["cloud"]),
            machine_type=r["machine_type"],
            count=int(r["local_ssds"]),
            gib_each=int(r["ssd_gib_each"]),
            source=r["source"],
        )
        for r in rows
    }
