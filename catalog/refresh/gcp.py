"""GCP prices from the Cloud Billing Catalog API (``services/6F81-5844-456A/skus``, Compute Engine): a machine's
price is its vCPUs x the family's core SKU + its GiB x the RAM SKU + its GPUs x the GPU SKU, on demand
(``usageType OnDemand``) and spot (``Preemptible``, descriptions starting "Spot Preemptible").

Only families priced that way are refreshed; families whose list price bundles local SSD or is sold as one SKU
(A2 Ultra, A3, A4, G4) are kept as they are and the command says so."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from catalog.refresh.errors import RefreshError
from catalog.refresh.http import Fetcher

COMPUTE_SERVICE = "6F81-5844-456A"
FAMILIES = {
    "a2-highgpu-": ("A2 Instance Core", "A2 Instance Ram", "Nvidia Tesla A100 GPU"),
    "a2-megagpu-": ("A2 Instance Core", "A2 Instance Ram", "Nvidia Tesla A100 GPU"),
    "g2-standard-": ("G2 Instance Core", "G2 Instance Ram", "Nvidia L4 GPU"),
    "e2-standard-": ("E2 Instance Core", "E2 Instance Ram", None),
    "n1-standard-": ("N1 Predefined Instance Core", "N1 Predefined Instance Ram", None),
}
"""Machine-type prefix -> SKU descriptions (before " running in <location>") of its core, RAM and GPU."""
ATTACHABLE = {"nvidia-tesla-t4": "Nvidia Tesla T4 GPU", "nvidia-tesla-v100": "Nvidia Tesla V100 GPU"}
SPOT_PREFIX = "Spot Preemptible "


@dataclass(frozen=True)
class Recipe:
    """What one catalog item costs in SKUs: counts x SKU descriptions."""

    parts: tuple[tuple[float, str], ...]


def machines(data_dir: Path, names: set[str]) -> dict[str, Recipe]:
    """The catalog items this module can price, with their recipes (counts from the catalog's own files)."""
    shapes: dict[str, tuple[float, float, float]] = {}
    for file in ("machines.csv", "host-machines.csv"):
        with open(data_dir / file, newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                if r["cloud"] == "gcp" and r["vcpu"].strip():
                    shapes[r["machine_type"]] = (float(r["vcpu"]), float(r["ram_gib"]), float(r.get("gpus") or 0))
    out = {}
    for name in sorted(names):
        if name in ATTACHABLE:
            out[name] = Recipe(((1.0, ATTACHABLE[name]),))
            continue
        family = next((f for f in FAMILIES if name.startswith(f)), None)
        if family is None or name not in shapes:
            continue
        core, ram, gpu = FAMILIES[family]
        vcpu, ram_gib, gpus = shapes[name]
        out[name] = Recipe(((vcpu, core), (ram_gib, ram)) + (((gpus, gpu),) if gpu and gpus else ()))
    return out


def _unit_price(sku: dict[str, Any]) -> float:
    try:
        rate = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][-1]["unitPrice"]
        return int(rate.get("units") or 0) + int(rate.get("nanos") or 0) / 1e9
    except (KeyError, IndexError, TypeError, ValueError):
        raise RefreshError(
            f"GCP SKU {sku.get('skuId', '?')} ({sku.get('description', '?')}): no unit price in "
            "pricingInfo[0].pricingExpression.tieredRates"
        ) from None


def _sku_prices(fetch: Fetcher, base: str, key: str) -> dict[tuple[str, str, str], float]:
    """(capacity, description before " running in", region) -> USD per unit, over every page."""
    out: dict[tuple[str, str, str], float] = {}
    token, page = "", 0
    while True:
        page += 1
        query = urlencode({"key": key, "currencyCode": "USD", **({"pageToken": token} if token else {})})
        data = fetch.json(f"{base}/v1/services/{COMPUTE_SERVICE}/skus?{query}", f"GCP SKUs page {page}", redact=key)
        if not isinstance(data.get("skus"), list):
            raise RefreshError(f"GCP SKUs page {page}: the response has no 'skus' list")
        for sku in data["skus"]:
            usage = sku.get("category", {}).get("usageType")
            capacity = {"OnDemand": "on-demand", "Preemptible": "spot"}.get(usage)
            description = str(sku.get("description", "")).split(" running in ")[0]
            if capacity is None:
                continue
            description = description.removeprefix(SPOT_PREFIX)
            for region in sku.get("serviceRegions", []):
                out[(capacity, description, region)] = _unit_price(sku)
        token = data.get("nextPageToken") or ""
        if not token:
            return out


def prices(
    fetch: Fetcher, base: str, key: str, items: dict[str, Recipe], regions: set[str] | None = None
) -> dict[tuple[str, str, str, str], float]:
    """$/h per (item, region, capacity) wherever every SKU of its recipe is priced."""
    skus = _sku_prices(fetch, base, key)
    all_regions = regions or {r for (_, _, r) in skus}
    out = {}
    for name, recipe in items.items():
        for region in all_regions:
            for capacity in ("on-demand", "spot"):
                parts = [skus.get((capacity, desc, region)) for _, desc in recipe.parts]
                if all(p is not None for p in parts):
                    total = sum(n * p for (n, _), p in zip(recipe.parts, parts) if p is not None)
                    out[("gcp", name, region, capacity)] = round(total, 6)
    return out
