"""Cloud and upstream limits a stack can hit (``catalog/data/cloud-limits.csv``): one row per limit, each with the
number, what it applies to, its source and the date it was read. Validation reads this table and names the row (its
text, source and date) when a stack breaks one, so a limit is written once and every refusal cites it. Pure data."""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from catalog.loader import DATA_DIR

CLOUDS = ("aws", "gcp", "any")


@dataclass(frozen=True)
class CloudLimit:
    id: str
    """Stable key validation looks the row up by (``gke-a4x-pool-nodes``)."""
    cloud: str
    """``aws``, ``gcp`` or ``any`` (an upstream limit, e.g. the cluster autoscaler's)."""
    applies_to: str
    """What the limit is about: a machine type, a resource kind, a feature."""
    limit: str
    """The limit in words, as a reviewer reads it in a refusal."""
    value: str
    """The number or value (a count, a zone name, ...); empty where the limit is a rule, not a number."""
    source: str
    """Where it is written (a URL, or an upstream file at a tag)."""
    as_of: str
    """The date the source was read (YYYY-MM-DD)."""

    def cite(self) -> str:
        """How a refusal names the limit: ``<limit> (source: <source>, read <as_of>)``."""
        return f"{self.limit} (source: {self.source}, read {self.as_of})"


@functools.cache
def load_cloud_limits() -> dict[str, CloudLimit]:
    with open(DATA_DIR / "cloud-limits.csv", newline="", encoding="utf-8") as fh:
        rows = [CloudLimit(**r) for r in csv.DictReader(fh)]
    out: dict[str, CloudLimit] = {}
    for row in rows:
        if row.cloud not in CLOUDS:
            raise ValueError(f"cloud-limits.csv: {row.id}: cloud {row.cloud!r} not in {CLOUDS}")
        if row.id in out:
            raise ValueError(f"cloud-limits.csv: {row.id} appears twice")
        if not row.source or not row.as_of:
            raise ValueError(f"cloud-limits.csv: {row.id} has no source or date")
        out[row.id] = row
    return out


def cloud_limit(limit_id: str) -> CloudLimit:
    """The row ``limit_id``; a KeyError names the table, so a check that cites a missing row fails loudly in tests."""
    try:
        return load_cloud_limits()[limit_id]
    except KeyError:
        raise KeyError(f"catalog/data/cloud-limits.csv has no row {limit_id!r}") from None


def sold_zones(cloud: str, machine_type: str) -> CloudLimit | None:
    """The row naming the only zones a machine type is sold in (id ``…-zones``, value: the zones, space-separated),
    or None where no such limit is written."""
    return next(
        (
            r
            for r in load_cloud_limits().values()
            if r.cloud == cloud and r.applies_to == machine_type and r.id.endswith("-zones")
        ),
        None,
    )
