"""AWS on-demand prices from the public Price List bulk API (no account): the offer index names the AmazonEC2
region index, which names each region's offer file (``products`` + ``terms.OnDemand``, documented in "Reading the
offer files", AWS Billing and Cost Management user guide)."""

from __future__ import annotations

from typing import Any

from catalog.refresh.errors import RefreshError
from catalog.refresh.http import Fetcher

OFFER_INDEX = "/offers/v1.0/aws/index.json"
PLAIN_LINUX = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
    "licenseModel": "No License required",
}
"""The attributes of the list price the catalog holds: Linux, shared tenancy, no software, a running instance."""


def _get(data: dict[str, Any], path: tuple[str, ...], what: str) -> Any:
    node: Any = data
    for key in path:
        if not isinstance(node, dict) or key not in node:
            raise RefreshError(
                f"{what}: the response has no {'.'.join(path)} (the format changed or the file is not the one expected)"
            )
        node = node[key]
    return node


def on_demand_prices(
    fetch: Fetcher, base: str, wanted: list[tuple[str, str]]
) -> dict[tuple[str, str, str, str], float]:
    """$/h of each (instance type, region) in ``wanted`` that the region's offer file states."""
    index = fetch.json(base + OFFER_INDEX, "AWS offer index")
    region_index_url = _get(index, ("offers", "AmazonEC2", "currentRegionIndexUrl"), "AWS offer index")
    regions = _get(fetch.json(base + region_index_url, "AWS EC2 region index"), ("regions",), "AWS EC2 region index")
    out: dict[tuple[str, str, str, str], float] = {}
    for region in sorted({r for _, r in wanted}):
        types = {t for t, r in wanted if r == region}
        if region not in regions:
            raise RefreshError(
                f"AWS EC2 region index: no offer file for {region} (the catalog prices {len(types)} types there)"
            )
        url = _get(regions, (region, "currentVersionUrl"), "AWS EC2 region index")
        offer = fetch.json(base + url, f"AWS EC2 prices {region}")
        out.update(_region_prices(offer, region, types))
    return out


def _region_prices(offer: dict[str, Any], region: str, types: set[str]) -> dict[tuple[str, str, str, str], float]:
    what = f"AWS EC2 prices {region}"
    products, terms = _get(offer, ("products",), what), _get(offer, ("terms", "OnDemand"), what)
    out = {}
    for sku, product in products.items():
        attrs = product.get("attributes", {})
        if attrs.get("instanceType") not in types or any(attrs.get(k) != v for k, v in PLAIN_LINUX.items()):
            continue
        for term in terms.get(sku, {}).values():
            for dimension in term.get("priceDimensions", {}).values():
                if dimension.get("unit") == "Hrs" and "USD" in dimension.get("pricePerUnit", {}):
                    out[("aws", attrs["instanceType"], region, "on-demand")] = float(dimension["pricePerUnit"]["USD"])
    return out
