"""Cost rules: a passing baseline (what the components create), then one field or knob changed per case."""

from __future__ import annotations

import re

import pytest

from tests.support.spec.edit import edit
from tests.support.policy.harness import FIXED_DATE, Pack, baseline, find, wire, with_props

NP, NG = "gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup"
FIX_LIMIT = (
    "Fix: use spot or a reservation with a negotiated price (priceOverrides), pick a cheaper machine type or "
    "region, or have the platform team raise {knob} of cost-gpu-hour-limit in the policy pack config"
)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


@pytest.fixture
def gke():
    return baseline("gcp")


@pytest.fixture
def eks():
    return baseline("aws")


def test_baselines_pass_every_rule(pack, gke, eks):
    """Every rule, the mandatory security-privileged-images-by-digest included: the baselines' GPUDirect installer
    and device plugins run vendor images gpu-cluster pins by digest (cited, or resolved at deploy)."""
    pack.configure()
    for resources in (gke, eks):
        assert pack.everything(resources) == []


def test_gpu_hour_limit_per_model(pack, gke):
    pack.configure({"cost-gpu-hour-limit": {"maxUsdPerGpuHourByModel": {"H100_80GB": 10}}})
    assert pack.resource(find(gke, NP, "h100"), gke) == [
        (
            "cost-gpu-hour-limit",
            "mandatory",
            "pool 'h100': the price per GPU-hour is over the limit · observed: $11.06 per GPU-hour: a3-highgpu-8g "
            "on-demand in us-central1 costs $88.49/node-hour for 8 × H100_80GB (catalog price as of 2026-07-30) · "
            "required: at most $10.00 per GPU-hour for H100_80GB, from maxUsdPerGpuHourByModel.H100_80GB\n"
            + FIX_LIMIT.format(knob="maxUsdPerGpuHourByModel.H100_80GB"),
        )
    ]


def test_gpu_hour_limit_default_on_eks_and_a_negotiated_price_passes(pack, eks):
    pack.configure({"cost-gpu-hour-limit": {"maxUsdPerGpuHour": 6}})
    assert pack.resource(find(eks, NG, "p5"), eks) == [
        (
            "cost-gpu-hour-limit",
            "mandatory",
            "pool 'p5': the price per GPU-hour is over the limit · observed: $6.88 per GPU-hour: p5.48xlarge on-demand "
            "in us-east-1 costs $55.04/node-hour for 8 × H100_80GB (catalog price as of 2026-08-26) · required: at most "
            "$6.00 per GPU-hour for H100_80GB, from maxUsdPerGpuHour\n" + FIX_LIMIT.format(knob="maxUsdPerGpuHour"),
        )
    ]
    override = {"machineType": "p5.48xlarge", "usdPerNodeHour": 40, "asOf": "2026-10-01", "source": "MSA-2026"}
    pack.configure({"cost-gpu-hour-limit": {"maxUsdPerGpuHour": 6, "priceOverrides": [override]}})
    assert pack.resource(find(eks, NG, "p5"), eks) == []
    spot_only = {**override, "capacity": "spot"}  # does not match an on-demand pool: the catalog price applies
    pack.configure({"cost-gpu-hour-limit": {"maxUsdPerGpuHour": 6, "priceOverrides": [spot_only]}})
    assert [d[0] for d in pack.resource(find(eks, NG, "p5"), eks)] == ["cost-gpu-hour-limit"]


def test_unknown_price_fails_closed_with_how_to_add_it(pack, gke):
    pack.configure()
    pool = find(gke, NP, "h100")
    edge = with_props(pool, edit(wire(pool), "nodeConfig.machineType", "a3-edgegpu-8g"))
    assert pack.resource(edge, gke) == [
        (
            "cost-gpu-hour-limit",
            "mandatory",
            "pool 'h100': no price is known for the pool, so its cost cannot be checked · observed: no price for "
            "a3-edgegpu-8g on-demand in us-central1 · required: a known price (unknown is not $0)\nFix: add a dated, "
            "sourced row to catalog/data/prices.csv, or add "
            '{"machineType": "a3-edgegpu-8g", "region": "us-central1", "capacity": "on-demand", "usdPerNodeHour": '
            '<price>, "asOf": "<YYYY-MM-DD>", "source": "<contract or quote>"} to priceOverrides of cost-gpu-hour-limit '
            "in the policy pack config",
        )
    ]
    elsewhere = with_props(pool, edit(wire(pool), "location", "europe-west2"))  # a region without A3 High
    assert "no price for a3-highgpu-8g on-demand in europe-west2" in pack.resource(elsewhere, gke)[0][2]


def test_unknown_machine_type_fails_closed(pack, gke):
    pack.configure()
    pool = find(gke, NP, "h100")
    future = with_props(pool, edit(wire(pool), "nodeConfig.machineType", "a9-future-8g"))
    assert pack.resource(future, gke) == [
        (
            "cost-gpu-hour-limit",
            "mandatory",
            "pool 'h100': the machine type is not in the GPU catalog, so its cost cannot be checked · observed: machine "
            "type a9-future-8g · required: a known price (unknown is not $0)\nFix: add a9-future-8g to "
            "catalog/data/machines.csv and a dated, sourced price "
            "to catalog/data/prices.csv, or use a machine type from the catalog",
        )
    ]


def test_stack_budget_counts_pools_at_max_system_pool_and_control_plane(pack, gke):
    pack.configure({"cost-stack-budget": {"maxUsdPerHour": 100}})
    assert pack.stack(gke) == [
        (
            "cost-stack-budget",
            "mandatory",
            "stack: the hourly cost at max autoscale is over the budget · observed: $354.46 per hour: h100 4 × $88.49 = "
            "$353.96, ml-system 3 × $0.13 = $0.40, control plane ml = $0.10 · required: at most $100.00/hour, from "
            "maxUsdPerHour\nFix: lower maxNodes of the largest pools (h100, ml-system), use spot or negotiated prices "
            "(priceOverrides), or have the platform team "
            "raise maxUsdPerHour of cost-stack-budget in the policy pack config",
        )
    ]
    pack.configure({"cost-stack-budget": {"maxUsdPerHour": 354.47}})
    assert pack.stack(gke) == []


def test_stack_budget_fails_closed_on_an_unpriced_gpu_pool(pack, gke):
    pack.configure()
    i, pool = next((i, r) for i, r in enumerate(gke) if r.type == NP and r.name == "h100")
    gke[i] = with_props(pool, edit(wire(pool), "nodeConfig.machineType", "a3-edgegpu-8g"))
    assert pack.stack(gke) == [
        (
            "cost-stack-budget",
            "mandatory",
            "stack: the budget cannot be checked · observed: unpriced GPU pools: h100 (no price for a3-edgegpu-8g) · "
            "required: a known price and autoscaler maximum for every GPU pool (unknown is not $0), to compare with the "
            "budget of $10,000.00/hour\nFix: give every GPU pool a known price and autoscaler maximum "
            "(catalog/data/prices.csv or "
            "priceOverrides of cost-stack-budget in the policy pack config)",
        )
    ]


def test_price_age_is_advisory_and_uses_the_evaluation_date(pack, eks):
    pack.configure()
    group = find(eks, NG, "p5")
    spot = with_props(group, edit(wire(group), "capacityType", "SPOT"))
    assert pack.resource(spot, eks) == [
        (
            "cost-price-age",
            "advisory",
            "pool 'p5': the price is old, so cost checks may be off · observed: the p5.48xlarge spot price in us-east-1 "
            "is 367 days old (catalog price as of 2025-11-30) · required: at most 180 days on 2026-12-02, from "
            "maxPriceAgeDays\nFix: refresh the price in "
            "catalog/data/prices.csv from the provider's current price list (with its date and source)",
        )
    ]
    pack.configure({"cost-price-age": {"evaluationDate": "2026-01-01"}})  # 32 days after the price's date
    assert pack.resource(spot, eks) == []


def test_a_waiver_silences_one_pool_and_is_reported_as_not_applicable(pack, gke):
    waiver = {"rule": "cost-gpu-hour-limit", "resource": "h100", "reason": "research grant pays for H100s"}
    pack.configure({"cost-gpu-hour-limit": {"maxUsdPerGpuHour": 1, "waivers": [waiver]}})
    pool = find(gke, NP, "h100")
    assert pack.resource(pool, gke) == []
    assert pack.not_applicable(pool, gke) == [
        ("cost-gpu-hour-limit", "waived: pool 'h100' (research grant pays for H100s)")
    ]
    other = {**waiver, "resource": "some-other-pool"}
    pack.configure({"cost-gpu-hour-limit": {"maxUsdPerGpuHour": 1, "waivers": [other]}})
    assert [d[0] for d in pack.resource(pool, gke)] == ["cost-gpu-hour-limit"]


def test_enforcement_override_from_the_config(pack, gke):
    pack.configure({"cost-gpu-hour-limit": {"maxUsdPerGpuHour": 1, "enforcementLevel": "advisory"}})
    assert [d[1] for d in pack.resource(find(gke, NP, "h100"), gke)] == ["advisory"]
    pack.configure({"all": "disabled"})
    assert pack.everything(gke) == []


@pytest.mark.parametrize("version, fee", [("1.33", 0.60), ("1.34", 0.60), ("1.35", 0.10)])
def test_stack_budget_prices_the_eks_control_plane_by_its_support_status(pack, eks, version, fee):
    """1.33 and 1.34 are past standard support on the catalog date (2026-12-02): extended support, $0.60/h."""
    cluster = find(eks, "aws:eks/cluster:Cluster", "ml")
    rs = [with_props(r, edit(wire(r), "version", version)) if r is cluster else r for r in eks]
    pack.configure({"cost-stack-budget": {"maxUsdPerHour": 1}})
    (diag,) = pack.stack(rs)
    assert f"control plane ml = ${fee:.2f}" in diag[2]


def test_stack_budget_and_preview_agree_on_fixed_costs_for_created_and_existing_clusters(pack):
    """The preview's fixed lines are what the budget rule counts: control plane (by version) for a created cluster,
    nothing for an existing one (its fee is not this stack's)."""
    from preview.run import preview_config
    from tests.support.spec.stack_configs import EKS

    for cfg, control_plane in (
        (edit(EKS, "cluster.kubernetesVersion", "1.33"), 0.60),
        (edit(EKS, "cluster.mode", "existing"), None),
    ):
        report = preview_config("t", cfg)
        fixed = {f.item.split(" (")[0]: f.usd_per_hour_max for f in report.cost.fixed}
        assert fixed.get("control plane") == (pytest.approx(control_plane) if control_plane else None)
        pack.configure({"cost-stack-budget": {"maxUsdPerHour": 0.01}})
        (diag,) = pack.stack(report.resources)
        counted = re.findall(r"control plane \S+ = \$[0-9.]+[0-9]", diag[2])
        assert counted == ([f"control plane ml = ${control_plane:.2f}"] if control_plane else [])
        total = sum(p.usd_per_hour_max for p in report.cost.pools) + sum(fixed.values())
        assert f"${total:,.2f} per hour" in diag[2]


def test_stack_budget_and_price_age_are_waived_per_stack_and_pool(pack, waived, gke, eks):
    assert waived(pack, "cost-stack-budget", "stack", lambda: pack.stack(gke), maxUsdPerHour=100) == []
    group = find(eks, NG, "p5")
    spot = with_props(group, edit(wire(group), "capacityType", "SPOT"))
    assert waived(pack, "cost-price-age", "p5", lambda: pack.resource(spot, eks), evaluationDate=FIXED_DATE) == []
