"""What reservations cost in the preview, to the cent: a capacity block's upfront fee over its window (paid whether
nodes run or not), unknown without a fee (and the budget rule fails closed), reserved nodes in $/h min, and the
policy pack's price overrides named."""

from __future__ import annotations

import json

import pytest

from preview.render.markdown import render_markdown
from preview.render.text import render_text
from preview.run import preview_config
from preview.policy.check import PolicyOptions
from tests.support.spec.edit import edit, edits
from tests.support.spec.stack_configs import EKS, GKE

BLOCK = {
    "type": "reservation",
    "reservation": "cr-0123456789abcdef0",
    "reservationKind": "capacity-block",
    "window": {"start": "2030-01-07T11:30:00Z", "durationHours": 336},
    "upfrontFeeUsd": 21504.0,
}
ODCR = {"type": "reservation", "reservation": "cr-0123456789abcdef0"}


def pool_cost(report, name: str = "p5"):
    assert report.cost is not None, [str(e) for e in report.errors]
    return next(p for p in report.cost.pools if p.pool == name)


@pytest.fixture(scope="module")
def block_report():
    return preview_config("t", edits(EKS, {"nodePools[0].capacity": BLOCK, "nodePools[0].minNodes": 2}))


def test_block_costs_its_fee_over_the_window_whether_nodes_run_or_not(block_report):
    p = pool_cost(block_report)
    # 21,504.00 / 336 h = 64.00 $/h; / 2 nodes = 32.00 $/node-h; / 8 GPUs = 4.00 $/GPU-h
    assert (p.capacity, p.usd_per_hour_min, p.usd_per_hour_max, p.usd_per_node_hour, p.usd_per_gpu_hour) == (
        "capacity-block",
        64.0,
        64.0,
        32.0,
        4.0,
    )
    assert round(p.usd_per_month_max, 2) == 21504.00  # the window is shorter than a month: the whole fee
    assert p.block == {
        "start": "2030-01-07T11:30:00Z",
        "end": "2030-01-21T11:30:00Z",
        "hours": 336.0,
        "scaleUpAt": "2030-01-07T11:30:00Z",
        "scaleDownAt": "2030-01-21T10:45:00Z",
        "usdTotal": 21504.0,
    }
    assert p.price_source == (
        "upfront fee $21,504.00 declared for 2030-01-07T11:30:00Z → 2030-01-21T11:30:00Z (336 h × 2 nodes)"
    )
    assert block_report.exit_code == 0


def test_preview_shows_the_window_and_the_schedule(block_report):
    md = render_markdown(block_report)
    assert (
        "| p5 | 2030-01-07T11:30:00Z → 2030-01-21T11:30:00Z (336 h) | $21,504.00 | 32.00 | 4.000 | "
        "2030-01-07T11:30:00Z → min 2 / desired 2 / max 2 | 2030-01-21T10:45:00Z → min 0 / desired 0 / max 0 |"
    ) in md
    text = render_text(block_report, color=False)
    assert "Capacity blocks (paid up front for the window, whether nodes run or not)" in text
    assert "capacity block p5: $21,504.00 paid up front for 2030-01-07T11:30:00Z → 2030-01-21T11:30:00Z" in text


def test_block_without_fee_is_unknown_and_the_budget_fails_closed():
    report = preview_config("t", edits(EKS, {"nodePools[0].capacity": {**BLOCK, "upfrontFeeUsd": None}}))
    p = pool_cost(report)
    assert (p.usd_per_hour_min, p.usd_per_hour_max, p.usd_per_node_hour) == (None, None, None)
    totals = report.cost.as_dict()["totals"]
    assert totals["complete"] is False and totals["unpricedPools"] == ["p5"]
    assert (
        "the cost of capacity block p5 is unknown (capacity block without capacity.upfrontFeeUsd): the totals "
        "leave it out and the cost-stack-budget policy fails closed; declare the fee and window you bought"
    ) in report.cost.notes
    budget = [v for v in report.violations if v["policy"] == "cost-stack-budget"]
    assert [v["enforcement"] for v in budget] == ["mandatory"] and report.exit_code == 1
    assert (
        "unpriced GPU pools: p5 (capacity block without a declared upfront fee (capacity.upfrontFeeUsd, "
        "capacity.window))"
    ) in budget[0]["message"]
    assert "+ unknown" in render_markdown(report)
    json.dumps(report.as_dict(), allow_nan=False)  # strict JSON: unknown is null, never NaN


@pytest.mark.parametrize(
    "capacity, nodes", [(ODCR, 2), ({**ODCR, "reservedNodes": 3}, 3)], ids=["default-max-nodes", "declared"]
)
def test_odcr_bills_every_reserved_node_so_min_is_never_zero(capacity, nodes):
    p = pool_cost(preview_config("t", edit(EKS, "nodePools[0].capacity", capacity)))
    assert p.min_nodes == 0 and p.reserved_nodes == nodes
    assert (round(p.usd_per_hour_min, 2), round(p.usd_per_hour_max, 2)) == (round(55.04 * nodes, 2),) * 2


def test_gke_reservation_min_is_its_reserved_nodes():
    report = preview_config("t", edit(GKE, "nodePools[0].capacity", {"type": "reservation", "reservation": "res-a3"}))
    p = pool_cost(report, "h100")
    assert (round(p.usd_per_hour_min, 2), p.reserved_nodes) == (353.96, 4)  # 4 × $88.49, with 0 nodes running
    assert any(
        n.startswith(
            "reservation pools are billed for every reserved node whether used or not, so $/h min counts them: h100 (4)"
        )
        for n in report.cost.notes
    )


def test_the_cost_table_prices_a_pool_at_its_policy_pack_override(tmp_path):
    """priceOverrides pass the cost rules and price the table the same way: $40 instead of the list $55.04."""
    config = tmp_path / "pack.json"
    config.write_text(
        json.dumps(
            {
                "cost-gpu-hour-limit": {
                    "priceOverrides": [
                        {
                            "machineType": "p5.48xlarge",
                            "capacity": "on-demand",
                            "usdPerNodeHour": 40,
                            "asOf": "2026-10-01",
                            "source": "savings plan 2026",
                        }
                    ]
                }
            }
        )
    )
    report = preview_config("t", EKS, policies=PolicyOptions(config_file=config))
    p, listed = pool_cost(report), pool_cost(preview_config("t", EKS))
    assert (listed.usd_per_node_hour, p.usd_per_node_hour, p.list_usd_per_node_hour) == (55.04, 40.0, 55.04)
    assert p.usd_per_hour_max == 40.0 * p.max_nodes and p.usd_per_gpu_hour == 5.0
    assert p.price_source == "negotiated price as of 2026-10-01 (savings plan 2026)" and p.price_as_of == "2026-10-01"
    assert round(report.cost.usd_per_hour_max - preview_config("t", EKS).cost.usd_per_hour_max, 2) == round(
        (40.0 - 55.04) * p.max_nodes, 2
    )
    assert (
        "price of p5 is overridden in the policy pack config (cost-gpu-hour-limit: $40.00/node-h, negotiated "
        "price as of 2026-10-01 (savings plan 2026)): the table shows $40.00/node-h instead of the list "
        "$55.04/node-h"
    ) in report.cost.notes
    assert not [n for n in preview_config("t", EKS).cost.notes if "overridden" in n]


def test_an_override_for_an_unpublished_reservation_price_makes_the_cost_known(tmp_path):
    """A reservation-bound machine without a public price is unknown, until priceOverrides gives the contract price:
    then the table counts it (reserved nodes × the override), as the budget rule does."""
    stack = edits(
        GKE,
        {
            "nodePools[0].machineType": "a4x-highgpu-4g",
            "nodePools[0].zones": ["us-central1-a"],
            "nodePools[0].capacity": {"type": "reservation", "reservation": "res-a4x"},
        },
    )
    before = preview_config("t", stack)
    assert pool_cost(before, "h100").usd_per_node_hour is None
    config = tmp_path / "pack.json"
    config.write_text(
        json.dumps(
            {
                "cost-stack-budget": {
                    "priceOverrides": [
                        {
                            "machineType": "a4x-highgpu-4g",
                            "usdPerNodeHour": 30,
                            "asOf": "2026-11-01",
                            "source": "contract A",
                        }
                    ]
                }
            }
        )
    )
    p = pool_cost(preview_config("t", stack, policies=PolicyOptions(config_file=config)), "h100")
    assert (p.usd_per_node_hour, p.usd_per_hour_min) == (30.0, 30.0 * p.reserved_nodes)


def test_the_month_total_counts_a_short_block_once(block_report):
    """The stack's $/month is each pool's month plus the fixed costs: a 336 h block is its fee, not 730 h × $64."""
    cost = block_report.cost
    others = sum(p.usd_per_month_max or 0.0 for p in cost.pools if p.pool != "p5")
    fixed = sum(f.usd_per_hour_max for f in cost.fixed) * 730
    assert round(cost.usd_per_month_max, 2) == round(21504.00 + others + fixed, 2)
    assert cost.usd_per_month_max < cost.usd_per_hour_max * 730  # the old total: 730 h of the block rate


@pytest.mark.parametrize(
    "window, fee, field",
    [
        ({"start": "2030-01-07T11:30:00Z", "durationHours": 100000000}, 21504.0, "capacity.window.durationHours"),
        ({"start": "9999-12-31T11:30:00Z", "durationHours": 24}, 21504.0, "capacity.window.durationHours"),
        ({"start": "2030-01-07T11:30:00Z", "durationHours": 336}, float("inf"), "capacity.upfrontFeeUsd"),
    ],
)
def test_windows_past_the_calendar_and_infinite_fees_are_refused_not_crashes(window, fee, field):
    report = preview_config(
        "t",
        edits(
            EKS,
            {"nodePools[0].capacity": {**BLOCK, "window": window, "upfrontFeeUsd": fee}, "nodePools[0].minNodes": 2},
        ),
    )
    assert report.cost is None and any(e.path.endswith(field) for e in report.errors), [str(e) for e in report.errors]


def test_the_queues_table_reads_the_cost_tables_overridden_price_and_the_title_says_so(tmp_path):
    """One price in both tables: with priceOverrides for the unpublished A4X reservation price, the account's $/h is
    nominal GPUs x the override's $/GPU-h, not "unknown", and the cost table no longer calls it a list price."""
    from preview.run import preview_stack

    before = preview_stack("gke-a4x-nvl72")
    assert {q.usd_per_hour for q in before.queues.quotas} == {None}
    assert "Cost (catalog list prices, USD)" in render_text(before)
    config = tmp_path / "pack.json"
    config.write_text(
        json.dumps(
            {
                "cost-stack-budget": {
                    "priceOverrides": [
                        {
                            "machineType": "a4x-highgpu-4g",
                            "capacity": "reservation",
                            "usdPerNodeHour": 40,
                            "asOf": "2026-11-01",
                            "source": "reservation contract",
                        }
                    ]
                }
            }
        )
    )
    report = preview_stack("gke-a4x-nvl72", policies=PolicyOptions(config_file=config))
    p = pool_cost(report, "gb200")
    assert (p.usd_per_node_hour, p.usd_per_gpu_hour) == (40.0, 10.0)
    assert [(q.pool, q.usd_per_hour) for q in report.queues.quotas] == [
        ("gb200", q.gpus * 10.0) for q in report.queues.quotas
    ]
    assert None not in report.queues.queue_usd_per_hour().values()
    text = render_text(report)
    assert "Cost (priceOverrides, catalog list prices, USD)" in text and "$/h unknown" not in text
