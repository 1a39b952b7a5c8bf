"""Build the catalog's regional CSVs (prices, regions, zone availability) from the researched price tables in
``../shared/facts/prices`` (see its SOURCES.md). Offline: the same tables the catalog test checks every price against.

Rules (all from SOURCES.md, nothing guessed):
- a region enters the catalog when its system-pool CPU type has an on-demand price and at least one catalog GPU
  machine is priced there, so every catalog region prices the system pool;
- GPU rows come from the main files only (``gpu-prices-gcp.csv``: a zone offering the type is evidenced;
  ``gpu-prices-aws.csv``: regular regions); SKU-only GCP rows, Local Zones and types the catalog does not model
  (fractional GPUs, P100/P4) stay out;
- N1 rows ("n1-standard-8 + 1x nvidia-tesla-t4") are split back into the host's and the GPU's own price, as the
  catalog prices an N1 pool as host + GPUs x count.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from catalog.refresh.rows import PriceRow, RegionRow, ZoneRow

SKY_V9_DATE = dt.date(2026, 7, 9)
"""SOURCES.md: the SkyPilot v9 snapshot is undated; >= 2026-07-09 is inferred from matching weekly snapshots."""
N1_ROW = re.compile(r"^(?P<host>n1-[a-z0-9-]+) \+ 1x (?P<gpu>[a-z0-9-]+)$")
N1_SPLIT = re.compile(
    r"host (?P<host>\S+) (?P<host_od>[\d.]+) \(spot (?P<host_spot>[\d.]+)\).*?"
    r"\+ 1x \S+ (?P<gpu_od>[\d.]+) \(spot (?P<gpu_spot>[\d.]+)\)"
)
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
MAIN_FILES = ("gpu-prices-gcp.csv", "gpu-prices-aws.csv")


@dataclass(frozen=True)
class Known:
    """What the catalog models: GPU machine types, attachable GPUs, and the system pool type per cloud."""

    machines: frozenset[tuple[str, str]]
    attachable: frozenset[tuple[str, str]]
    system: dict[str, str]


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _dates(as_of: str, capacity: str) -> dt.date:
    """``OD 2026-01-21; spot 2025-11-30`` / ``2026-07-30`` / ``SkyPilot v9 snapshot (...)`` -> the capacity's date."""
    if "SkyPilot" in as_of and not DATE.search(as_of.split("SkyPilot")[0]):
        return SKY_V9_DATE
    parts = dict(p.strip().split(" ", 1) for p in as_of.split(";") if p.strip()[:2] in ("OD", "sp"))
    if parts:
        text = parts.get("OD" if capacity == "on-demand" else "spot", "")
        return dt.date.fromisoformat(text.strip())
    return dt.date.fromisoformat(DATE.findall(as_of)[0])


def _label(cloud: str, capacity: str, as_of: dt.date) -> str:
    if cloud == "gcp":
        return "SkyPilot v9 catalog" if as_of == SKY_V9_DATE else "GCP billing catalog (Cyclenerd)"
    if as_of == SKY_V9_DATE:
        return "SkyPilot v9 catalog"
    return "AWS price list (ec2instances.info)" if capacity == "on-demand" else "AWS spot (ec2instances.info)"


def _price(
    cloud: str, item: str, region: str, capacity: str, value: str, as_of: dt.date, file: str, source: str
) -> PriceRow:
    return PriceRow(
        cloud=cloud,
        machine_type=item,
        region=region,
        capacity=capacity,
        usd_per_hour=round(float(value), 6),
        as_of=as_of,
        label=_label(cloud, capacity, as_of),
        source=f"shared facts prices/{file}: {source}",
    )


def _gpu_rows(folder: Path, known: Known) -> list[PriceRow]:
    out: dict[tuple[str, str, str, str], PriceRow] = {}
    for file in MAIN_FILES:
        for r in _rows(folder / file):
            cloud, name, region = r["cloud"], r["machine_type"], r["region"]
            n1 = N1_ROW.match(name)
            for column, capacity in (("on_demand_usd_hr", "on-demand"), ("spot_usd_hr", "spot")):
                if not r[column].strip():
                    continue
                if (cloud, name) in known.machines:
                    date = _dates(r["as_of"], capacity)
                    out[(cloud, name, region, capacity)] = _price(
                        cloud, name, region, capacity, r[column], date, file, r["source"]
                    )
                elif n1 and (cloud, n1["gpu"]) in known.attachable:
                    out.update(_n1_rows(cloud, region, capacity, file, r, n1["host"], n1["gpu"]))
    return list(out.values())


def _n1_rows(
    cloud: str, region: str, capacity: str, file: str, r: dict[str, str], host: str, gpu: str
) -> dict[tuple[str, str, str, str], PriceRow]:
    """Host and GPU prices of an N1 row; their sum must equal the row's total (a check on the parse)."""
    split = N1_SPLIT.search(r["source"])
    if split is None or split["host"] != host:
        raise ValueError(f"{file}: cannot split the N1 row {r['machine_type']} {region}: {r['source'][:80]}")
    suffix = "od" if capacity == "on-demand" else "spot"
    host_usd, gpu_usd = float(split[f"host_{suffix}"]), float(split[f"gpu_{suffix}"])
    total = float(r["on_demand_usd_hr" if capacity == "on-demand" else "spot_usd_hr"])
    if abs(host_usd + gpu_usd - total) > 0.0005:
        raise ValueError(f"{file}: {r['machine_type']} {region} {capacity}: {host_usd} + {gpu_usd} != {total}")
    host_date = _dates(r["as_of"].split(";")[0].replace("host", "").strip(), capacity)
    host_src = f"{host} part of the row '{r['machine_type']}' {region}: {r['source']}"
    gpu_src = f"{gpu} part (per GPU) of the row '{r['machine_type']}' {region}: {r['source']}"
    return {
        (cloud, host, region, capacity): _price(
            cloud, host, region, capacity, str(host_usd), host_date, file, host_src
        ),
        (cloud, gpu, region, capacity): _price(cloud, gpu, region, capacity, str(gpu_usd), SKY_V9_DATE, file, gpu_src),
    }


def _system_rows(folder: Path, known: Known) -> list[PriceRow]:
    out = []
    for r in _rows(folder / "system-prices.csv"):
        if known.system.get(r["cloud"]) != r["machine_type"]:
            continue
        for column, capacity in (("on_demand_usd_hr", "on-demand"), ("spot_usd_hr", "spot")):
            if r[column].strip():
                out.append(
                    _price(
                        r["cloud"],
                        r["machine_type"],
                        r["region"],
                        capacity,
                        r[column],
                        _dates(r["as_of"], capacity),
                        "system-prices.csv",
                        r["source"],
                    )
                )
    return out


def build(folder: Path, known: Known) -> tuple[list[PriceRow], list[RegionRow], list[ZoneRow]]:
    """Every price, region and zone-availability row the facts support for what the catalog models."""
    gpu, system = _gpu_rows(folder, known), _system_rows(folder, known)
    system_od = {(p.cloud, p.region) for p in system if p.capacity == "on-demand"}
    with_gpu = {(p.cloud, p.region) for p in gpu}
    keep = system_od & with_gpu
    regions = []
    for r in _rows(folder / "regions-zones.csv"):
        key = (r["cloud"], r["region"])
        if key not in keep:
            continue
        ids = r["zones"].split()
        # AWS: the facts list AZ IDs; AZ names map to them per account, so the catalog names no AWS zone
        names, zone_ids = (ids, []) if r["cloud"] == "gcp" else ([], ids)
        source = f"shared facts prices/regions-zones.csv: {r['source']}"
        if r["cloud"] == "aws":
            source += "; AZ IDs only (an AZ name maps to an ID per account: not sourced)"
        regions.append(
            RegionRow(
                cloud=r["cloud"], region=r["region"], zones=" ".join(names), zone_ids=" ".join(zone_ids), source=source
            )
        )
    prices = sorted(
        (p for p in gpu + system if (p.cloud, p.region) in keep),
        key=lambda p: (p.cloud, p.machine_type, p.region, p.capacity),
    )
    return prices, sorted(regions, key=lambda r: (r.cloud, r.region)), _zone_rows(folder, known, keep)


def _zone_rows(folder: Path, known: Known, keep: set[tuple[str, str]]) -> list[ZoneRow]:
    zones: dict[tuple[str, str], list[str]] = {}
    sources: dict[tuple[str, str], str] = {}
    for r in _rows(folder / "gpu-zone-availability-gcp.csv"):
        key = (r["cloud"], r["machine_type_or_accelerator"])
        if (r["cloud"], r["region"]) not in keep or (key not in known.machines and key not in known.attachable):
            continue
        zones.setdefault(key, []).append(r["zone"])
        sources[key] = f"shared facts prices/gpu-zone-availability-gcp.csv ({r['evidence']}): {r['source']}"
    return [
        ZoneRow(cloud=c, machine_type=m, zones=" ".join(sorted(set(z))), as_of=SKY_V9_DATE, source=sources[(c, m)])
        for (c, m), z in sorted(zones.items())
    ]
