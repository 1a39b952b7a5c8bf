"""The GPU catalog: complete machine facts, sane dated prices, GKE accelerator names, every accepted pool priced,
and agreement with the shared research tables in ``../shared/facts``."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from catalog import CapacityType, Cloud, GpuModel, PriceKind, SoldAs, load_catalog
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

CAT = load_catalog()

KNOWN_UNPRICED = {
    (Cloud.GCP, "a3-edgegpu-8g"): "shared facts gpu-catalog.md §5.4: 'a3-edgegpu-8g has no price'",
    (Cloud.AWS, "p5e.48xlarge"): "shared facts prices/SOURCES.md §3: sold only as Capacity Blocks, no list price",
    (Cloud.AWS, "p6e-gb200.36xlarge"): "sold only as UltraServer Capacity Blocks: the declared fee is the price "
    "(catalog/data/capacity-block-rates.csv has a third-party reference rate)",
    (Cloud.GCP, "a4x-highgpu-4g"): "reservation-bound, no public list price (fleet-nvl72-podstart-research.md §2.5): "
    "its cost is unknown unless priceOverrides gives it",
}
"""Machine types the catalog describes but cannot price anywhere: a pool of them is refused (fail closed), except a
capacity block with its declared fee and a reservation-bound machine, whose cost is shown as unknown."""

GKE_ACCELERATORS = {
    "a2-highgpu-": "nvidia-tesla-a100",
    "a2-megagpu-": "nvidia-tesla-a100",
    "a2-ultragpu-": "nvidia-a100-80gb",
    "a3-highgpu-": "nvidia-h100-80gb",
    "a3-edgegpu-": "nvidia-h100-80gb",
    "a3-megagpu-": "nvidia-h100-mega-80gb",
    "a3-ultragpu-": "nvidia-h200-141gb",
    "a4-highgpu-": "nvidia-b200",
    "a4x-highgpu-": "nvidia-gb200",
    "g2-standard-": "nvidia-l4",
    "g4-standard-": "nvidia-rtx-pro-6000",
}
"""GKE ``cloud.google.com/gke-accelerator`` value per machine family (shared facts gpu-catalog.md §2.2)."""


def _has_any_price(cloud: Cloud, machine_type: str) -> bool:
    return any(c == cloud and m == machine_type for (c, m, _, _) in CAT.prices)


# -- machine facts -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", sorted(CAT.machines, key=lambda k: (k[0].value, k[1])), ids=lambda k: k[1])
def test_machine_facts_are_complete(key):
    m = CAT.machines[key]
    assert m.gpus > 0
    assert isinstance(m.gpu_model, GpuModel)
    assert m.accelerator.strip()
    domain = CAT.nvlink_domain(m)
    if domain is None:
        assert 1 <= m.nvlink_domain_gpus <= m.gpus
    else:  # a rack-scale domain: whole nodes of this machine
        assert m.nvlink_domain_gpus == domain.domain_gpus == domain.domain_nodes * m.gpus
    assert m.gpu_memory_gib > 0 and m.gpu_memory_gib % m.gpus == 0
    assert m.source.strip()
    if m.cloud == Cloud.AWS:
        assert m.efa_interfaces is None or m.efa_interfaces >= 0
    assert _has_any_price(*key) or key in KNOWN_UNPRICED, f"{key[1]} has no price in catalog/data/prices.csv"


def test_unpriced_machines_are_exactly_the_known_ones():
    """A new unpriced type must be listed with its reason; a newly priced one must leave the list."""
    unpriced = {key for key in CAT.machines if not _has_any_price(*key)}
    assert unpriced == set(KNOWN_UNPRICED)


@pytest.mark.parametrize(
    "key", sorted((k for k in KNOWN_UNPRICED if k not in CAT.special), key=lambda k: k[1]), ids=lambda k: k[1]
)
def test_unpriced_machines_are_refused_not_priced_at_zero(key):
    cloud, machine_type = key
    for region in CAT.region_names(cloud):
        for capacity in CapacityType:
            issues = _load_errors(_minimal_config(cloud, region, machine_type, None, None, capacity))
            assert "gpu-cluster:nodePools[0].machineType" in [i.path for i in issues]
            assert {i.path for i in issues} <= REFUSED_UNPRICED
            assert any("refusing to guess" in i.problem for i in issues)


def test_attachable_gpus_fit_their_hosts():
    for (cloud, accelerator), gpu in CAT.attachable.items():
        assert gpu.allowed_counts and all(n > 0 for n in gpu.allowed_counts)
        for host in gpu.host_machine_types:
            assert CAT.hosts[(cloud, host)].role == "gpu-host", (accelerator, host)


@pytest.mark.parametrize(
    "key", sorted((k for k in CAT.machines if k[0] == Cloud.GCP), key=lambda k: k[1]), ids=lambda k: k[1]
)
def test_gcp_accelerator_is_the_gke_name(key):
    machine = CAT.machines[key]
    family = [prefix for prefix in GKE_ACCELERATORS if machine.machine_type.startswith(prefix)]
    assert len(family) == 1, f"no GKE accelerator name known for {machine.machine_type}; add its family above"
    assert machine.accelerator == GKE_ACCELERATORS[family[0]]


def test_gcp_attachable_accelerators_are_gke_names():
    assert {a for (c, a) in CAT.attachable if c == Cloud.GCP} == {"nvidia-tesla-t4", "nvidia-tesla-v100"}


# -- prices ------------------------------------------------------------------------------------------------------
def test_prices_are_positive_sourced_and_not_from_the_future():
    today = dt.date.today()
    bad = []
    for (cloud, item, region, kind), price in CAT.prices.items():
        if not (price.usd_per_hour > 0 and price.source.strip() and price.label.strip() and price.as_of <= today):
            bad.append((cloud.value, item, region, kind.value, price))
    for cloud, fee in CAT.control_plane.items():
        if not (fee.usd_per_hour > 0 and fee.source.strip() and fee.as_of <= today):
            bad.append((cloud.value, "control-plane", fee))
    assert bad == []


def test_prices_name_known_items_and_regions():
    known = {(c, m) for (c, m) in CAT.machines} | set(CAT.hosts) | set(CAT.attachable)
    for cloud, item, region, _kind in CAT.prices:
        assert (cloud, item) in known, item
        assert region in CAT.region_names(cloud), (item, region)


def test_zone_availability_names_catalog_zones_and_machines():
    for (cloud, item), avail in CAT.zone_availability.items():
        all_zones = {z for (c, _), zones in CAT.regions.items() if c == cloud for z in zones}
        assert avail.zones and set(avail.zones) <= all_zones, item
        assert (cloud, item) in CAT.machines or (cloud, item) in CAT.attachable, item


# -- every pool the loader accepts is priced ---------------------------------------------------------------------
def _shapes(cloud: Cloud) -> list[tuple[str, str | None, int | None]]:
    """Every pool machine shape: fixed-GPU types, and N1 hosts with each attachable GPU and allowed count."""
    shapes: list[tuple[str, str | None, int | None]] = []
    for machine_type in CAT.machine_types(cloud):
        if (cloud, machine_type) in CAT.machines:
            shapes.append((machine_type, None, None))
        else:
            shapes += [
                (machine_type, gpu.accelerator, n)
                for gpu in CAT.attachable_gpus(cloud, machine_type)
                for n in gpu.allowed_counts
            ]
    return shapes


def _minimal_config(
    cloud: Cloud, region: str, machine_type: str, accelerator: str | None, count: int | None, capacity: CapacityType
) -> dict[str, Any]:
    zones = CAT.zones(cloud, region) or (f"{region}a", f"{region}b")  # AWS: any letter names a zone
    machine = CAT.resolve(cloud, machine_type, accelerator, count)
    avail = CAT.offered_zones(cloud, machine) if machine is not None else None
    zone = next((z for z in zones if avail is None or z in avail.zones), zones[0])
    pool: dict[str, Any] = {
        "name": "gpu",
        "machineType": machine_type,
        "zones": [zone],
        "maxNodes": 2,
        "capacity": {"type": capacity.value},
    }
    if accelerator is not None:
        pool["accelerator"] = {"type": accelerator, "count": count}
    if capacity == CapacityType.RESERVATION:
        pool["capacity"]["reservation"] = "cr-0123456789abcdef0" if cloud == Cloud.AWS else "gpu-reservation"
    if capacity == CapacityType.FLEX_START:  # plain flex-start VMs: queued ones need a Kueue stack to be accepted
        pool["capacity"]["queuedProvisioning"] = False
    cfg: dict[str, Any] = {"cloud": cloud.value, "region": region, "cluster": {"name": "ml-train"}, "nodePools": [pool]}
    if cloud == Cloud.GCP:
        cfg["project"] = "ml-platform-prod"
    else:
        cfg["cluster"]["subnets"] = {z: f"subnet-0123456789abcdef{i}" for i, z in enumerate(zones)}
    return cfg


def _load_errors(cfg: dict[str, Any]) -> list:
    try:
        load_spec(cfg)
    except SpecError as exc:
        return exc.errors
    return []


def _reservation_bound(cloud: Cloud, machine_type: str, capacity: CapacityType) -> bool:
    special = CAT.special.get((cloud, machine_type))
    return special is not None and special.sold_as == SoldAs.RESERVATION_BOUND and capacity == CapacityType.RESERVATION


REFUSED_UNPRICED = {
    "gpu-cluster:nodePools[0].machineType",
    "gpu-cluster:nodePools[0].zones[0]",
    "gpu-cluster:nodePools[0].capacity.type",
}
"""Where an unpriced pool is refused: no price, not offered in the region's zones, or sold only as capacity blocks."""

COMBOS = [
    pytest.param(cloud, region, capacity, id=f"{cloud.value}-{region}-{capacity.value}")
    for (cloud, region) in sorted(CAT.regions, key=lambda k: (k[0].value, k[1]))
    for capacity in CapacityType
    # flex-start is GKE's DWS (refused on EKS), priced only where catalog/data/flex-start-prices.csv has rows
    if capacity != CapacityType.FLEX_START
    or any(k[0] == cloud and k[2] == region and k[3] == PriceKind.FLEX_START for k in CAT.prices)
]


@pytest.mark.parametrize("cloud, region, capacity", COMBOS)
def test_every_accepted_pool_has_machine_facts_and_a_price(cloud, region, capacity):
    """load_spec accepts a pool exactly when the catalog resolves its machine and prices it (fail closed)."""
    accepted, problems = 0, []
    for machine_type, accelerator, count in _shapes(cloud):
        errors = _load_errors(_minimal_config(cloud, region, machine_type, accelerator, count, capacity))
        machine = CAT.resolve(cloud, machine_type, accelerator, count)
        price = CAT.node_price(machine, region, capacity) if machine is not None else None
        label = f"{machine_type} {accelerator or ''}x{count or ''}"
        if not errors:
            accepted += 1
            if machine is not None and price is None and _reservation_bound(cloud, machine_type, capacity):
                continue  # accepted with its cost unknown (the cost policies fail closed on it)
            if machine is None or price is None or not price.usd_per_hour > 0:
                problems.append(f"{label}: accepted but machine={machine is not None} price={price}")
            elif machine.gpus < 1:
                problems.append(f"{label}: accepted with {machine.gpus} GPUs")
        elif price is not None:
            problems.append(f"{label}: priced but rejected: {[str(e) for e in errors]}")
        elif not {e.path for e in errors} & REFUSED_UNPRICED or {e.path for e in errors} - REFUSED_UNPRICED:
            problems.append(f"{label}: unpriced, rejected for another reason: {[str(e) for e in errors]}")
    assert problems == []
    assert accepted > 0


# -- the ../shared helper itself ---------------------------------------------------------------------------------
def test_missing_shared_skips_locally_and_fails_in_ci(monkeypatch, tmp_path):
    from tests import conftest

    monkeypatch.setattr(conftest, "PROJECT_ROOT", tmp_path / "project")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="absent"):
        conftest.require_shared("facts", "gpu-catalog-aws.csv")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        conftest.require_shared("facts", "gpu-catalog-aws.csv")
    (tmp_path / "shared" / "facts").mkdir(parents=True)
    assert conftest.require_shared("facts") == tmp_path / "shared" / "facts"


# -- flex-start (DWS) prices ---------------------------------------------------------------------------------------
def test_flex_start_prices_are_dated_sourced_sums_of_dws_skus_below_on_demand():
    """catalog/data/flex-start-prices.csv: GKE only, each row names its Compute Engine SKU ids, and a DWS price is a
    discount on the on-demand one (never above it: a row that is would be a mistaken SKU)."""
    rows = {k: p for k, p in CAT.prices.items() if k[3] == PriceKind.FLEX_START}
    assert rows, "no flex-start prices loaded"
    for (cloud, machine_type, region, _), price in rows.items():
        assert cloud == Cloud.GCP, machine_type
        assert "341A-49A5-0C07" in price.source and "DWS Defined Duration" in price.source
        on_demand = CAT.prices[(cloud, machine_type, region, PriceKind.ON_DEMAND)]
        assert 0.3 < price.usd_per_hour / on_demand.usd_per_hour < 0.6, machine_type
    machine = CAT.machines[(Cloud.GCP, "a3-highgpu-8g")]
    assert CAT.node_price(machine, "us-central1", CapacityType.FLEX_START).usd_per_hour == 38.320038
    assert CAT.node_price(machine, "us-east4", CapacityType.FLEX_START) is None  # unknown stays unknown
    # 8 H100 + 208 vCPU + 1872 GB + 6000 GiB local SSD at the SKU prices in the row's source
    assert round(8 * 4.200761 + 208 * 0.010934 + 1872 * 0.000952 + 6000 * 0.08 / 730, 6) == 38.320038


def test_rack_scale_nvlink_domains_are_whole_nodes_and_sourced():
    assert set(CAT.nvlink_domains) == {(Cloud.GCP, "a4x-highgpu-4g"), (Cloud.AWS, "p6e-gb200.36xlarge")}
    for key, domain in CAT.nvlink_domains.items():
        machine = CAT.machines[key]
        assert machine.arch == "arm64" and machine.gpu_model == GpuModel.GB200
        assert (domain.domain_gpus, domain.domain_nodes) == (72, 18)
        assert domain.domain_label and "cluster-toolkit" in domain.source or "eks-user-guide" in domain.source
    assert CAT.nvlink_domains[(Cloud.GCP, "a4x-highgpu-4g")].accelerator_topology == "1x72"


def test_ultraservers_are_whole_domains_of_their_machine():
    sizes = {u.ultraserver_type: (u.instances, u.gpus) for u in CAT.ultraservers.values()}
    assert sizes == {"u-p6e-gb200x36": (9, 36), "u-p6e-gb200x72": (18, 72)}
    for u in CAT.ultraservers.values():
        assert u.gpus == u.instances * CAT.machines[(u.cloud, u.machine_type)].gpus


def test_capacity_block_reference_rate_says_it_is_third_party():
    rate = CAT.block_rates[(Cloud.AWS, "p6e-gb200.36xlarge", "us-east-1")]
    assert rate.usd_per_gpu_hour == 10.582 and "THIRD-PARTY" in rate.source and "third-party" in rate.label
    assert round(rate.usd_per_gpu_hour * 72, 3) == 761.904  # the tracker's $/h per u-p6e-gb200x72
