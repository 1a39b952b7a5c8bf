"""The two refresh flows: read the current catalog files, build the new rows, print the diff, write atomically."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

from rich.console import Console

from catalog.refresh.diff import price_changes, print_changes
from catalog.refresh.errors import RefreshError
from catalog.refresh.facts import Known, build
from catalog.refresh.rows import PriceRow, RegionRow, ZoneRow, read_prices, write_rows

SYSTEM_ROLE = "system"


def known_items(data_dir: Path) -> Known:
    """What the catalog models, read from the data folder being refreshed (not the installed catalog)."""

    def rows(name: str) -> list[dict[str, str]]:
        with open(data_dir / name, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))

    hosts = rows("host-machines.csv")
    return Known(
        machines=frozenset((r["cloud"], r["machine_type"]) for r in rows("machines.csv")),
        attachable=frozenset((r["cloud"], r["accelerator"]) for r in rows("attachable-gpus.csv")),
        system={r["cloud"]: r["machine_type"] for r in hosts if r["role"] == SYSTEM_ROLE},
    )


def import_facts(console: Console, folder: Path, data_dir: Path, *, dry_run: bool) -> None:
    if not (folder / "SOURCES.md").is_file():
        raise RefreshError(f"{folder} is not the shared price facts folder (no SOURCES.md); pass its path")
    prices, regions, zones = build(folder, known_items(data_dir))
    print_changes(console, price_changes(read_prices(data_dir / "prices.csv"), prices))
    console.print(f"{len(prices)} prices in {len(regions)} regions; zone availability for {len(zones)} machine types")
    if not dry_run:
        write_rows(data_dir / "prices.csv", prices, PriceRow)
        write_rows(data_dir / "regions.csv", regions, RegionRow)
        write_rows(data_dir / "zone-availability.csv", zones, ZoneRow)


def merge(
    old: list[PriceRow],
    fresh: dict[tuple[str, str, str, str], float],
    pulled: set[tuple[str, str, str]],
    label: dict[str, str],
    source: dict[str, str],
    today: dt.date,
) -> list[PriceRow]:
    """The old rows with fresh values. ``pulled`` holds the (cloud, item, capacity) a source was asked for: each of
    their rows must be in ``fresh`` (a catalog price the source no longer states is an error, never silently kept
    or dropped); rows of other items are kept as they were."""
    out, vanished = [], []
    for row in old:
        if (row.cloud, row.machine_type, row.capacity) not in pulled:
            out.append(row)
        elif row.key in fresh:
            out.append(
                PriceRow(
                    cloud=row.cloud,
                    machine_type=row.machine_type,
                    region=row.region,
                    capacity=row.capacity,
                    usd_per_hour=fresh[row.key],
                    as_of=today,
                    label=label[row.cloud],
                    source=source[row.cloud],
                )
            )
        else:
            vanished.append(" ".join(row.key))
    if vanished:
        shown = "; ".join(vanished[:8]) + (f"; … {len(vanished) - 8} more" if len(vanished) > 8 else "")
        raise RefreshError(
            f"{len(vanished)} catalog price(s) are no longer stated by the source: {shown}. "
            "Check the machine type is still sold there; remove the rows from prices.csv (or the "
            "region) deliberately if it is not"
        )
    return out


def refresh(
    console: Console,
    data_dir: Path,
    *,
    clouds: set[str],
    aws_base: str,
    gcp_base: str,
    gcp_key: str | None,
    timeout: float,
    dry_run: bool,
) -> None:
    from catalog.refresh import aws, gcp
    from catalog.refresh.http import Fetcher

    if "gcp" in clouds and not gcp_key:
        raise RefreshError(
            "the GCP prices need a Cloud Billing Catalog API key: set GPU_CLUSTER_GCP_API_KEY (an API "
            "key of a project with the Cloud Billing API enabled), or run with --cloud aws"
        )
    old = read_prices(data_dir / "prices.csv")
    today = dt.datetime.now(dt.timezone.utc).date()
    fresh: dict[tuple[str, str, str, str], float] = {}
    pulled: set[tuple[str, str, str]] = set()
    label: dict[str, str] = {}
    source: dict[str, str] = {}
    with Fetcher(console, timeout) as fetch:
        if "aws" in clouds:
            wanted = sorted({(r.machine_type, r.region) for r in old if r.cloud == "aws" and r.capacity == "on-demand"})
            fresh.update(aws.on_demand_prices(fetch, aws_base, wanted))
            pulled |= {("aws", m, "on-demand") for m, _ in wanted}
            label["aws"] = "AWS Price List API"
            source["aws"] = f"{aws_base}{aws.OFFER_INDEX} -> AmazonEC2 region offer files (pulled {today})"
            console.print("AWS spot: kept as they were (DescribeSpotPriceHistory needs account credentials)")
        if "gcp" in clouds:
            assert gcp_key is not None
            items = gcp.machines(data_dir, {r.machine_type for r in old if r.cloud == "gcp"})
            fresh.update(gcp.prices(fetch, gcp_base, gcp_key, items))
            pulled |= {("gcp", name, capacity) for name in items for capacity in ("on-demand", "spot")}
            label["gcp"] = "Cloud Billing Catalog API"
            source["gcp"] = (
                f"{gcp_base}/v1/services/{gcp.COMPUTE_SERVICE}/skus (pulled {today}): vCPU, RAM and "
                "GPU SKUs x the machine's counts"
            )
            kept = sorted({r.machine_type for r in old if r.cloud == "gcp"} - set(items))
            if kept:
                console.print(f"GCP: no SKU mapping, kept as they were: {', '.join(kept)}")
    new = merge(old, fresh, pulled, label, source, today)
    print_changes(console, price_changes(old, new))
    if not dry_run:
        write_rows(data_dir / "prices.csv", new, PriceRow)
