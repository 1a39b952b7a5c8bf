"""Regions beyond the first four: a pool previews at the shared facts' price to the cent, the system pool is in
every total (us-east4 included), and a missing price stops the preview (exit 2) instead of shrinking the total."""

from __future__ import annotations

import csv
import dataclasses
from typing import Any

import pytest

from catalog import Cloud, PriceKind, load_catalog
from preview.cost import UnpricedCost, stack_cost
from preview.run import preview_config
from stacks.plan.facts import pool_facts
from tests.conftest import require_shared
from tests.support.spec.edit import edits
from tests.support.spec.stack_configs import EKS, GKE
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

CAT = load_catalog()


def _fact(file: str, machine: str, region: str) -> float:
    with open(require_shared("facts", "prices", file), newline="", encoding="utf-8") as fh:
        row = next(r for r in csv.DictReader(fh) if r["machine_type"] == machine and r["region"] == region)
    return float(row["on_demand_usd_hr"])


GKE_EUROPE = edits(
    GKE,
    {
        "gpu-cluster:region": "europe-west4",
        "gpu-cluster:nodePools[0].machineType": "a3-megagpu-8g",
        "gpu-cluster:nodePools[0].zones": ["europe-west4-b"],
    },
)
EKS_OHIO = edits(
    EKS,
    {
        "gpu-cluster:region": "us-east-2",
        "gpu-cluster:cluster.subnets": {
            "us-east-2a": "subnet-0123456789abcdef0",
            "us-east-2b": "subnet-0123456789abcdef1",
        },
        "gpu-cluster:nodePools[0].zones": ["us-east-2a"],
    },
)


@pytest.mark.parametrize(
    "config, file, machine, region",
    [
        (GKE_EUROPE, "gpu-prices-gcp.csv", "a3-megagpu-8g", "europe-west4"),
        (EKS_OHIO, "gpu-prices-aws.csv", "p5.48xlarge", "us-east-2"),
    ],
    ids=["a3-mega-europe-west4", "p5-us-east-2"],
)
def test_a_pool_in_a_new_region_previews_at_the_facts_price_to_the_cent(config, file, machine, region):
    report = preview_config("regional", config)
    assert report.errors == []
    (pool,) = report.cost.pools
    assert (pool.machine_type, f"{pool.usd_per_node_hour:.2f}") == (machine, f"{_fact(file, machine, region):.2f}")
    assert pool.usd_per_hour_max == pytest.approx(
        pool.usd_per_node_hour * 4 if machine.startswith("a3") else pool.usd_per_node_hour * 2
    )
    system = [f for f in report.cost.fixed if f.item.startswith("system pool")]
    assert len(system) == 1 and system[0].usd_per_hour_max > 0


US_EAST4_STACKS = ["gke-a3-spread", "gke-a3-ultra-rdma", "gke-h100-512"]


@pytest.mark.parametrize("stack", US_EAST4_STACKS)
def test_every_us_east4_total_includes_the_system_pool(stack):
    from preview.run import preview_stack

    report = preview_stack(stack)
    assert report.region == "us-east4" and report.errors == []
    price = CAT.prices[(Cloud.GCP, "e2-standard-4", "us-east4", PriceKind.ON_DEMAND)].usd_per_hour
    (system,) = [f for f in report.cost.fixed if f.item.startswith("system pool")]
    assert system.usd_per_hour_max == pytest.approx(price * 3)  # default maxNodes 3
    assert report.cost.usd_per_hour_max == pytest.approx(
        sum(p.usd_per_hour_max for p in report.cost.pools) + sum(f.usd_per_hour_max for f in report.cost.fixed)
    )


def _without_system_price(region: str):
    cat = dataclasses.replace(
        CAT, prices={k: v for k, v in CAT.prices.items() if not (k[1] == "e2-standard-4" and k[2] == region)}
    )
    return cat


def test_a_system_pool_without_a_price_is_refused_by_validation_naming_it():
    cfg: dict[str, Any] = {k.split(":", 1)[1]: v for k, v in GKE.items()}
    with pytest.raises(SpecError) as info:
        load_spec(cfg, _without_system_price("us-central1"))
    (error,) = info.value.errors
    assert error.path == "gpu-cluster:cluster.systemPool.machineType" and error.value == "e2-standard-4"
    assert "no on-demand price for the system pool's e2-standard-4 in us-central1" in error.problem


def test_the_cost_stops_rather_than_print_a_total_without_the_system_pool(monkeypatch):
    cfg: dict[str, Any] = {k.split(":", 1)[1]: v for k, v in GKE.items()}
    spec, _ = load_spec(cfg)
    cat = _without_system_price("us-central1")
    with pytest.raises(
        UnpricedCost,
        match="cluster.systemPool.machineType: no on-demand catalog price for e2-standard-4 in us-central1",
    ):
        stack_cost(spec, [pool_facts(spec, p, cat) for p in spec.node_pools], cat)
    # and the preview turns it into a configuration error (exit 2) with no resources and no cost
    import preview.run as run

    monkeypatch.setattr(run, "stack_cost", lambda *a: stack_cost(spec, [], cat))
    report = preview_config("unpriced", GKE)
    assert [e.path for e in report.errors] == ["gpu-cluster:cluster.systemPool.machineType"]
    assert report.resources == [] and report.cost is None


def test_an_aws_zone_is_any_letter_of_a_catalog_region_and_its_availability_stays_unknown():
    """The facts list AZ IDs; a name (``us-east-2f``) maps to one per account, so no letter is refused — the preview
    says the zone was not checked instead of pretending to know."""
    config = edits(
        EKS_OHIO,
        {
            "gpu-cluster:cluster.subnets.us-east-2f": "subnet-0123456789abcdef2",
            "gpu-cluster:nodePools[0].zones": ["us-east-2f"],
        },
    )
    report = preview_config("ohio-f", config)
    assert report.errors == []
    (warning,) = [w for w in report.warnings if w.path == "gpu-cluster:nodePools[0].zones"]
    assert warning.problem == (
        "pool 'p5': the catalog does not know which zones offer p5.48xlarge (no public per-zone source, and which AZ "
        "a zone's letter names differs per account); not checked: us-east-2f"
    )
    assert "aws ec2 describe-instance-type-offerings" in warning.fix and "--region us-east-2" in warning.fix
    declared = edits(
        config,
        {
            "gpu-cluster:nodePools[0].zoneAvailabilityOverride": {
                "zones": ["us-east-2f"],
                "reason": "checked with describe-instance-type-offerings",
            }
        },
    )
    assert [w for w in preview_config("ohio-f", declared).warnings if w.path == "gpu-cluster:nodePools[0].zones"] == []


def test_a_capacity_block_of_a_machine_without_list_price_previews_at_its_declared_fee():
    """p5e.48xlarge is sold only as capacity blocks and has no list price: the block's fee over its window is its
    price (2 nodes × 336 h for $21,504.00 = $32.00/node-h, $4.00/GPU-h), never a guessed on-demand rate."""
    config = edits(
        EKS,
        {
            "gpu-cluster:nodePools[0].machineType": "p5e.48xlarge",
            "gpu-cluster:nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "reservationKind": "capacity-block",
                "upfrontFeeUsd": 21504,
                "reservedNodes": 2,
                "window": {"start": "2030-01-07T11:30:00Z", "durationHours": 336},
            },
        },
    )
    report = preview_config("p5e-block", config)
    assert report.errors == []
    (pool,) = report.cost.pools
    assert (pool.usd_per_node_hour, pool.usd_per_gpu_hour, pool.usd_per_hour_min) == (32.0, 4.0, 64.0)
    assert report.cost.unpriced == []
