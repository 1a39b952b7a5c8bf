"""Each cost convention is said in the notes of the pools it affects, on the example stacks that have it: the
730-hour month, AWS spot = the cheapest AZ (with the AZ average and the dearest from the price's own source), a
capacity block's fee over its window, a flex-start price's source and age and its nodes' maxRunHours, SkyPilot dates as
inferred lower bounds; a total that leaves out an unpriced pool names it next to the number; boot disks and Cloud NAT
are named as not counted."""

from __future__ import annotations

import json

import pytest

from catalog import CapacityType, Cloud, load_catalog
from stacks.plan.facts import pool_facts
from preview.cost import CostReport, stack_cost
from preview.engine import PROJECT_ROOT, read_stack_file
from preview.render.text import render_text
from preview.run import preview_config
from stacks.validate.load import decode_config, load_spec


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def cost_of(stack: str, cat) -> CostReport:
    spec, _ = load_spec(decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")), cat)
    return stack_cost(spec, [pool_facts(spec, p, cat) for p in spec.node_pools], cat)


def notes_of(report: CostReport, pool: str) -> tuple[str, ...]:
    return next(p.notes for p in report.pools if p.pool == pool)


def test_the_730_hour_month_names_every_priced_pool_but_a_capacity_block(cat):
    report = cost_of("eks-p5-efa", cat)
    month = [n for n in report.conventions if n.startswith("a month is 730 hours")]
    assert month == [
        "a month is 730 hours (8,760 h / 12, as the cloud price lists count it): $/month max = $/h max "
        "× 730: p5-ondemand, l40s-spot"
    ]
    assert "$/month max = $/h max × 730 h" in notes_of(report, "l40s-spot")
    assert not any("730 h" in n and "×" in n for n in notes_of(report, "p5-block"))
    ondemand = next(p for p in report.pools if p.pool == "p5-ondemand")
    assert ondemand.usd_per_month_max == pytest.approx(ondemand.usd_per_hour_max * 730)


def test_aws_spot_is_the_cheapest_az_with_the_average_and_dearest_from_the_source(cat):
    report = cost_of("eks-p5-efa", cat)
    price = cat.node_price(cat.resolve(Cloud.AWS, "g6e.xlarge"), "us-east-1", CapacityType.SPOT)
    assert "spot_min = min across AZs (avg 0.8761, max 0.9527)" in price.source  # the row the note reads
    expected = "AWS spot = the cheapest AZ in us-east-1 on 2025-11-30 ($0.7113/h; AZ average $0.8761, dearest $0.9527)"
    assert expected in notes_of(report, "l40s-spot")
    assert f"l40s-spot: {expected}" in report.conventions
    assert not any("AWS spot" in n for n in notes_of(report, "p5-ondemand"))


def test_a_capacity_blocks_fee_is_spread_over_its_window(cat):
    report = cost_of("eks-p5-efa", cat)
    block = next(p for p in report.pools if p.pool == "p5-block")
    assert any(n.startswith("the upfront fee spread evenly over the block's window") for n in block.notes)
    assert block.usd_per_hour_min == block.usd_per_hour_max  # paid whether nodes run or not
    assert any(
        n.startswith("capacity blocks (p5-block): the upfront fee is spread evenly")
        and "the whole fee is billed at purchase" in n
        for n in report.conventions
    )


def test_flex_start_names_its_price_source_age_and_max_run_hours(cat):
    report = cost_of("gke-flex-start-tas", cat)
    note = next(n for n in notes_of(report, "h100-flex") if n.startswith("flex-start price"))
    # a3-highgpu-8g us-central1: flex-start SKUs billed 2025-08-16; the on-demand list price is of 2026-07-30
    assert note == (
        "flex-start price from GCP DWS flex-start SKUs, as of 2025-08-16 (348 days older than the "
        "on-demand list price of 2026-07-30); each node lives at most maxRunHours = 72 h, then GKE "
        "deletes it"
    )
    assert f"h100-flex: {note}" in report.conventions


def test_skypilot_dates_are_inferred_lower_bounds(cat):
    report = cost_of("gke-a3-ultra-rdma", cat)
    h200 = next(p for p in report.pools if p.pool == "h200")
    assert "SkyPilot" in h200.price_source  # this example's price comes from the SkyPilot v9 catalog
    assert "price date 2026-07-09 is an inferred lower bound (SkyPilot v9)" in h200.notes
    assert any(
        n.startswith("prices from the SkyPilot v9 catalog (h200)") and "inferred lower bound" in n
        for n in report.conventions
    )
    dev = cost_of("dev", cat)  # the L4's zones are SkyPilot's, its price Cyclenerd's
    assert "zone availability from SkyPilot v9, as of ≥ 2026-07-09 (an inferred lower bound)" in notes_of(dev, "l4")
    assert not any(n.startswith("price date") for n in notes_of(dev, "l4"))


def test_boot_disks_and_cloud_nat_are_named_as_not_counted(cat):
    dev = cost_of("dev", cat)  # default network: the stack creates a Cloud NAT
    assert dev.not_counted == [
        "boot disks (per node: l4 200 GiB; the system pool's at the provider's default size; "
        "billed per GiB-month on top of the node price)",
        "Cloud NAT (per gateway-hour and per GB processed)",
    ]
    assert "not counted: " + "; ".join(dev.not_counted) in dev.conventions
    own_network = cost_of("gke-h100-512", cat)  # brings its own VPC: no NAT created, none named
    assert not any("Cloud NAT" in n for n in own_network.not_counted)
    assert cost_of("eks-p5-efa", cat).not_counted[0].startswith("boot disks (per node: p5-block 200 GiB")


def test_json_totals_name_the_unpriced_pool_next_to_each_number():
    report = preview_config("gke-a4x-nvl72", read_stack_file(PROJECT_ROOT / "Pulumi.gke-a4x-nvl72.yaml"))
    totals = json.loads(json.dumps(report.as_dict()))["cost"]["totals"]
    for key in ("usdPerHourMin", "usdPerHourMax", "usdPerMonthMax"):
        assert totals[f"{key}Excludes"] == ["gb200"], key
    assert totals["complete"] is False
    assert [n.split(" (")[0] for n in totals["notCounted"]] == ["boot disks", "Cloud NAT"]
    pools = json.loads(json.dumps(report.as_dict()))["cost"]["pools"]
    assert all(isinstance(p["notes"], list) for p in pools)
    text = render_text(report, color=False)
    assert "note: not counted: boot disks" in text


def test_a_complete_total_excludes_nothing():
    report = preview_config("dev", read_stack_file(PROJECT_ROOT / "Pulumi.dev.yaml"))
    totals = report.as_dict()["cost"]["totals"]
    assert totals["usdPerHourMaxExcludes"] == [] and totals["complete"] is True
