"""The catalog against the researched price tables in ``../shared/facts/prices``: every price it holds is the facts'
price (to the cent), every fact about a modelled machine in a catalog region is in it, every catalog region prices
the system pool, and the regions left out are exactly the ones the facts cannot support."""

from __future__ import annotations

import csv
import re

import pytest

from catalog import CapacityType, Cloud, PriceKind, load_catalog
from tests.conftest import require_shared

CAT = load_catalog()
GPU_FILES = ("gpu-prices-gcp.csv", "gpu-prices-aws.csv")
N1_ROW = re.compile(r"^(?P<host>n1-[a-z0-9-]+) \+ (?P<count>\d+)x (?P<accelerator>[a-z0-9-]+)$")
COLUMNS = (("on_demand_usd_hr", CapacityType.ON_DEMAND), ("spot_usd_hr", CapacityType.SPOT))
NOT_MODELLED = {
    "g4-standard-6",
    "g4-standard-12",
    "g4-standard-24",
    "g6f.large",
    "g6f.xlarge",
    "g6f.2xlarge",
    "g6f.4xlarge",
    "gr6f.4xlarge",
    "n1-standard-8 + 1x nvidia-tesla-p100",
    "n1-standard-8 + 1x nvidia-tesla-p4",
    "p6-b300.48xlarge",
}
"""Facts rows the catalog does not model: fractional GPUs (the catalog counts whole GPUs), the legacy P100/P4, and
p6-b300 (its facts give 2,100 GiB of GPU memory for 8 GPUs, not a whole number per GPU, and no local NVMe size)."""
REGIONS_LEFT_OUT = {
    (Cloud.AWS, r): "no m6i.xlarge (system pool) price in the facts"
    for r in (
        "ap-south-2",
        "ap-southeast-5",
        "eu-central-2",
        "eu-south-2",
        "il-central-1",
        "sa-east-1",
        "us-gov-east-1",
        "us-gov-west-1",
    )
}
"""Regions with GPU prices in the facts that the catalog leaves out, so that every catalog total is a total."""


def _rows(name: str) -> list[dict[str, str]]:
    with open(require_shared("facts", "prices", name), newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows, name
    return rows


def _machine(cloud: Cloud, name: str):
    n1 = N1_ROW.match(name)
    if n1:
        return CAT.resolve(cloud, n1["host"], n1["accelerator"], int(n1["count"]))
    return CAT.machines.get((cloud, name))


def _facts() -> dict[tuple[Cloud, str, str, CapacityType], float]:
    """(cloud, facts machine name, region, capacity) -> $/node-h, for every priced row in a catalog region."""
    out = {}
    for file in GPU_FILES + ("system-prices.csv",):
        for r in _rows(file):
            cloud = Cloud(r["cloud"])
            if (cloud, r["region"]) not in CAT.regions:
                continue
            for column, capacity in COLUMNS:
                if r[column].strip():
                    out[(cloud, r["machine_type"], r["region"], capacity)] = float(r[column])
    return out


def _catalog_price(cloud: Cloud, name: str, region: str, capacity: CapacityType) -> float | None:
    if (cloud, name) in CAT.hosts and CAT.hosts[(cloud, name)].role == "system":
        kind = PriceKind.SPOT if capacity == CapacityType.SPOT else PriceKind.ON_DEMAND
        price = CAT.prices.get((cloud, name, region, kind))
    else:
        machine = _machine(cloud, name)
        price = None if machine is None else CAT.node_price(machine, region, capacity)
    return None if price is None else price.usd_per_hour


def test_every_fact_of_a_modelled_machine_is_the_catalog_price_to_the_cent():
    mismatches, compared = [], 0
    for (cloud, name, region, capacity), usd in _facts().items():
        if name in NOT_MODELLED:
            continue
        compared += 1
        ours = _catalog_price(cloud, name, region, capacity)
        if ours is None or round(ours, 2) != round(usd, 2) or abs(ours - usd) > 1e-6:
            mismatches.append((cloud.value, name, region, capacity.value, usd, ours))
    assert mismatches == []
    assert compared > 1500


def test_every_catalog_gpu_price_is_stated_by_the_facts():
    """The reverse: no fixed-GPU price the facts do not state (N1 hosts and GPUs are checked through their sum)."""
    facts = _facts()
    extra = [
        (c.value, m, r, k.value, p.usd_per_hour)
        for (c, m, r, k), p in CAT.prices.items()
        # flex-start (DWS) prices have their own file and sources (tests/catalog/test_catalog.py checks them)
        if (c, m) in CAT.machines
        and k != PriceKind.FLEX_START
        and abs(facts.get((c, m, r, CapacityType(k.value)), -1) - p.usd_per_hour) > 1e-6
    ]
    assert extra == []


def test_every_machine_the_facts_price_is_in_the_catalog():
    names = {r["machine_type"] for f in GPU_FILES for r in _rows(f)}
    missing = sorted(
        n for n in names - NOT_MODELLED if _machine(Cloud.GCP, n) is None and _machine(Cloud.AWS, n) is None
    )
    assert missing == []


@pytest.mark.parametrize(
    "cloud, region",
    sorted(CAT.regions, key=lambda k: (k[0].value, k[1])),
    ids=lambda v: v.value if isinstance(v, Cloud) else v,
)
def test_every_catalog_region_prices_the_system_pool(cloud, region):
    for machine in CAT.system_machine_types(cloud):
        price = CAT.host_price(cloud, machine, region)
        assert price is not None and price.usd_per_hour > 0, (machine, region)


def test_regions_left_out_are_exactly_those_the_facts_cannot_support():
    with_gpu = {(Cloud(r["cloud"]), r["region"]) for f in GPU_FILES for r in _rows(f)}
    assert {k for k in with_gpu if k not in CAT.regions} == set(REGIONS_LEFT_OUT)


def test_regions_and_zones_come_from_the_facts():
    facts = {(Cloud(r["cloud"]), r["region"]): r["zones"].split() for r in _rows("regions-zones.csv")}
    for (cloud, region), zones in CAT.regions.items():
        if cloud == Cloud.GCP:
            assert list(zones) == facts[(cloud, region)], region
        else:  # AZ IDs only: an AZ name maps to an ID per account, so the catalog names no AWS zone
            assert list(CAT.zone_ids[(cloud, region)]) == facts[(cloud, region)], region
            assert zones == (), region
            assert CAT.is_zone(cloud, region, f"{region}z") and not CAT.is_zone(
                cloud, region, facts[(cloud, region)][0]
            )


def test_zone_availability_is_the_facts_per_machine():
    facts: dict[str, set[str]] = {}
    for r in _rows("gpu-zone-availability-gcp.csv"):
        if (Cloud.GCP, r["region"]) in CAT.regions:
            facts.setdefault(r["machine_type_or_accelerator"], set()).add(r["zone"])
    for (cloud, item), avail in CAT.zone_availability.items():
        assert set(avail.zones) == facts[item], item
    modelled = {m for (c, m) in CAT.machines if c == Cloud.GCP} | {a for (c, a) in CAT.attachable if c == Cloud.GCP}
    assert {(Cloud.GCP, m) for m in facts if m in modelled} == set(CAT.zone_availability)
