"""The what-if bills as the preview prices (one billing model, ``stacks/plan/billing.py``): a capacity block at its
declared fee over its window, reserved and block nodes for the whole run whether up or not, on-demand while up, and
the policy pack's negotiated prices. Dollars recomputed by hand from the stack files and the price facts."""

from __future__ import annotations

import pytest

from stacks.plan.billing import match_override, paid_node_seconds
from catalog import CapacityType
from tests.support.whatif.stacks import COLD, cluster, kueue_config, l4_pool
from whatif.api import PROJECT_ROOT, load_stack_spec
from whatif.cluster_build import build_cluster
from whatif.metrics import pool_row
from whatif.model import Job, SimOptions
from whatif.run import run_whatif, simulate_jobs

OPTS = SimOptions(spot_interruptions=False)


def _run_example(stack: str):
    """The example's what-if as documented (``python -m whatif --stack X --workload workloads/X.yaml``)."""
    return run_whatif(stack, PROJECT_ROOT / "workloads" / f"{stack}.yaml").result


def test_a_capacity_block_is_billed_at_its_declared_fee_not_the_on_demand_list():
    """eks-kueue: $274,869.50 for 4,368 h × 2 p5 nodes = $31.4640/node-h = $3.933/GPU-h (the old what-if: the
    on-demand $6.88/GPU-h, $11,705.86 for the same 1,701.43 paid GPU-h)."""
    res = _run_example("eks-kueue")
    row = pool_row(res.pools["p5"])
    node_h = 274_869.50 / 4368 / 2
    assert row["usdPerGpuHour"] == round(node_h / 8, 4) == 3.933
    hours = res.horizon_s / 3600
    assert res.pools["p5"].paid_node_s == pytest.approx(2 * res.horizon_s)  # both block nodes, the whole run
    assert row["costUsd"] == round(2 * hours * node_h, 2)
    assert 6_680 < row["costUsd"] < 6_700  # not 11,705.86


def test_block_nodes_are_billed_for_the_whole_run_whether_up_or_not():
    """eks-p6e-gb200 (minNodes 0, one 18-node UltraServer block): all 18 nodes are paid for the whole run, so
    utilization is allocated / (18 × 4 × hours), about 52 % (the old what-if billed only while up: 88 %)."""
    res = _run_example("eks-p6e-gb200")
    u = res.pools["gb200"]
    assert u.paid_node_s == pytest.approx(18 * res.horizon_s)
    row = pool_row(u)
    node_h = 255_999.74 / 336 / 18
    assert row["costUsd"] == round(18 * res.horizon_s / 3600 * node_h, 2)
    assert 0.50 < row["utilization"] < 0.54


def _gke_reserved(min_nodes: int):
    pool = {
        "name": "h100",
        "machineType": "a3-highgpu-8g",
        "zones": ["us-central1-a"],
        "minNodes": min_nodes,
        "maxNodes": 4,
        "multiNode": True,
        "capacity": {"type": "reservation", "reservation": "res-a3"},
    }
    return kueue_config([pool], [{"name": "a", "quotas": [{"pool": "h100", "gpus": 32}]}])


def test_a_gke_reservation_at_min_nodes_zero_is_billed_for_every_reserved_node():
    """4 reserved a3-highgpu-8g, one 8-GPU job of 1 h on one node: the bill is 4 nodes × the whole run at $88.49
    (GCP list, us-central1), not one node while it ran (the old what-if: about a tenth of it)."""
    model = cluster(_gke_reserved(0), OPTS)
    res = simulate_jobs(model, [Job("j", 0, "a", 8, run_s=3600)], 0, OPTS)
    u = res.pools["h100"]
    assert u.paid_node_s == pytest.approx(4 * res.horizon_s)
    assert pool_row(u)["costUsd"] == round(4 * res.horizon_s / 3600 * model.pools["h100"].usd_per_node_hour, 2)
    assert model.pools["h100"].usd_per_node_hour == pytest.approx(88.49, abs=0.01)


def test_on_demand_nodes_are_still_billed_only_while_up():
    cfg = kueue_config([l4_pool(2)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 4}]}])
    res = simulate_jobs(cluster(cfg, OPTS), [Job("j", 0, "a", 2, run_s=3600)], 0, OPTS)
    # provisioning + the pull and pod start + run + scale-down delay
    assert res.pools["l4"].paid_node_s == pytest.approx(300 + COLD + 3600 + 600)


def test_a_horizon_past_the_last_job_does_not_change_the_bill():
    """The run ends with its last job (plus the scale-down tail the autoscaler still bills), whatever
    ``--horizon-hours`` says; the old what-if dropped the 600-s tail whenever a horizon was given."""
    cfg = kueue_config([l4_pool(2)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 4}]}])
    jobs = [Job("j", 0, "a", 2, run_s=3600)]
    bills = [
        simulate_jobs(cluster(cfg, o), jobs, 0, o).pools["l4"].paid_node_s
        for o in (OPTS, SimOptions(spot_interruptions=False, horizon_s=100 * 3600))
    ]
    assert bills == pytest.approx([300 + COLD + 3600 + 600] * 2)


def test_a_horizon_that_cuts_the_run_bills_up_to_the_horizon():
    cfg = kueue_config([l4_pool(2)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 4}]}])
    opts = SimOptions(spot_interruptions=False, horizon_s=1800)
    res = simulate_jobs(cluster(cfg, opts), [Job("j", 0, "a", 2, run_s=3600)], 0, opts)
    assert res.pools["l4"].paid_node_s == 1800 and res.horizon_s == 1800  # the job still runs: no tail


def test_the_what_if_prices_a_pool_at_its_policy_pack_override():
    spec = load_stack_spec(
        kueue_config([l4_pool(2, min_nodes=2)], [{"name": "a", "quotas": [{"pool": "l4", "gpus": 4}]}])
    )
    negotiated = [{"machineType": "g2-standard-24", "usdPerNodeHour": 1.5, "asOf": "2026-10-01", "source": "CUD"}]
    assert build_cluster(spec, "t", price_overrides=negotiated).pools["l4"].usd_per_node_hour == 1.5
    assert build_cluster(spec, "t").pools["l4"].usd_per_node_hour != 1.5


def test_nodes_above_the_reservation_are_billed_while_up():
    # 2 committed; 3 nodes up over [0, 10) and 4 over [5, 10): 2 × 20 + (1 × 5 + 2 × 5) = 55 node-seconds
    billed = [(0, 10), (0, 10), (0, 10), (5, 10)]
    assert paid_node_seconds(billed, 2, 20) == 55
    assert paid_node_seconds([(0, 30)], 1, 20) == 20  # a stretch past the end counts up to the end only
    assert paid_node_seconds([(0, 10), (5, 30)], 0, 20) == 25  # nothing committed: while up


def test_the_most_specific_price_override_wins():
    items = [
        {"machineType": "m", "usdPerNodeHour": 3, "asOf": "2026-01-01", "source": "a"},
        {
            "machineType": "m",
            "region": "r",
            "capacity": "spot",
            "usdPerNodeHour": 1,
            "asOf": "2026-01-01",
            "source": "b",
        },
        {"machineType": "m", "region": "r", "usdPerNodeHour": 2, "asOf": "2026-01-01", "source": "c"},
    ]
    assert match_override(items, "m", "r", CapacityType.SPOT).usd_per_node_hour == 1
    assert match_override(items, "m", "r", CapacityType.ON_DEMAND).usd_per_node_hour == 2
    assert match_override(items, "m", "x", CapacityType.ON_DEMAND).usd_per_node_hour == 3
    assert match_override(items, "other", "r", CapacityType.SPOT) is None


def test_the_what_if_cli_reads_price_overrides_from_the_policy_pack_config(tmp_path, capsys):
    """``--policy-pack-config``: the file the preview takes; its priceOverrides price the what-if's pools too."""
    import json
    from whatif.__main__ import main

    config = tmp_path / "pack.json"
    config.write_text(
        json.dumps(
            {
                "cost-stack-budget": {
                    "priceOverrides": [
                        {
                            "machineType": "g2-standard-24",
                            "capacity": "spot",
                            "usdPerNodeHour": 0.5,
                            "asOf": "2026-10-01",
                            "source": "CUD",
                        }
                    ]
                }
            }
        )
    )
    args = [
        "--stack",
        "gke-kueue",
        "--workload",
        str(PROJECT_ROOT / "workloads" / "gke-kueue.yaml"),
        "--format",
        "json",
        "--horizon-hours",
        "2",
    ]
    assert main(args + ["--policy-pack-config", str(config)]) == 0
    l4 = next(p for p in json.loads(capsys.readouterr().out)["pools"] if p["pool"] == "l4")
    assert l4["usdPerGpuHour"] == 0.25  # $0.50 per 2-GPU node-hour
    assert main(args + ["--policy-pack-config", str(tmp_path / "missing.json")]) == 2
    assert "--policy-pack-config" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_every_what_if_format_states_what_is_billed_so_the_dollars_can_be_recomputed(fmt, capsys):
    """eks-kueue: the block's fee, window and nodes; the spot pool's price and which spot price; the run's span."""
    from whatif.__main__ import main

    args = (
        [
            "--stack",
            "eks-kueue",
            "--workload",
            str(PROJECT_ROOT / "workloads" / "eks-kueue.yaml"),
            "--format",
            fmt,
            "--color",
            "never",
        ]
        if fmt == "text"
        else ["--stack", "eks-kueue", "--workload", str(PROJECT_ROOT / "workloads" / "eks-kueue.yaml"), "--format", fmt]
    )
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())  # the text table wraps long lines
    for words in (
        "the declared fee $274,869.50 over its 4368-h window and 2 nodes = $31.4640/node-h",
        "whether nodes run or not",
        "l40s (spot): each node paid while up",
        "$0.7113/node-h",
        "lowest price among the region's zones",
        "whatever --horizon-hours says",
        "$ per used GPU-h = cost $ / (allocated - lost) GPU-h",
        # the preview's table adds these; a reader comparing totals must know the what-if leaves them out
        "GPU pools only: the control plane and the system pool",
    ):
        assert words in out, (fmt, words)
    assert "list $/GPU-h" not in out and "list prices from the catalog" not in out  # a block's rate is its fee


def test_the_billing_note_recomputes_the_block_cost():
    """The note's rate × paid node-hours is the what-if's cost (no hidden factor)."""
    res = _run_example("eks-kueue")
    row = pool_row(res.pools["p5"])
    assert row["costUsd"] == pytest.approx(274_869.50 / 4368 / 2 * res.pools["p5"].paid_node_s / 3600, abs=0.01)
