"""End to end: every example stack previewed with the real pack (booted as the CLI boots it), and the two
examples built to be refused get exactly their violations, exit 1, grouped by pool with the config path."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from preview.engine import PROJECT_ROOT
from preview.run import preview_stack
from tests.support.policy.examples import REFUSED_EXAMPLES

ALL_STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_example_gets_exactly_its_expected_mandatory_violations(stack):
    report = preview_stack(stack)
    assert report.errors == []
    mandatory = sorted((v["policy"], v["group"]) for v in report.violations if v["enforcement"] == "mandatory")
    assert mandatory == sorted(REFUSED_EXAMPLES.get(stack, []))
    assert report.exit_code == (1 if stack in REFUSED_EXAMPLES else 0)
    assert report.policy_rules, "the pack did not run"


def test_over_budget_example_names_the_pools_to_shrink():
    (v,) = [v for v in preview_stack("eks-over-budget").violations if v["enforcement"] == "mandatory"]
    assert v["message"].startswith(
        "stack: the hourly cost at max autoscale is over the budget · observed: "
        "$12,153.51 per hour: h200-team-a 96 × $63.30 = $6,076.42, h200-team-b 96 × $63.30 "
        "= $6,076.42"
    )
    assert " · required: at most $10,000.00/hour, from maxUsdPerHour\n" in v["message"]
    assert "lower maxNodes of the largest pools (h200-team-a, h200-team-b)" in v["message"]


def test_topology_example_points_at_the_pool_config_path():
    report = preview_stack("gke-a3-spread")
    paths = {v["configPath"] for v in report.violations if v["enforcement"] == "mandatory"}
    assert paths == {"gpu-cluster:nodePools[0]"}
    (message,) = [v["message"] for v in report.violations if v["enforcement"] == "mandatory"]  # one per pool
    problem, fix = message.split("\n")
    assert problem.startswith(
        "pool 'a3-mega': this a3-megagpu-8g pool (HGX-class with GPUDirect-TCPXO, up to 32 "
        "nodes) spans 2 zones and has no compact placement · observed: nodeLocations us-east4-a "
        "and us-east4-b; placementPolicy.type unset · required: one zone and "
        "placementPolicy.type COMPACT"
    )
    assert ") (" not in problem and problem.count(" · observed: ") == problem.count(" · required: ") == 1
    # the zone comes first: gpu-cluster refuses multiNode: true while the pool has two zones
    assert fix.startswith("Fix: first keep one zone (gpu-cluster: zones: [us-east4-a]), then set multiNode: true")


@pytest.mark.slow
def test_cli_text_groups_by_pool_and_exits_1(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "gke-a3-spread", "--color", "never"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 1, out.stderr
    assert "1 policy violation (1 mandatory)" in out.stdout
    assert "pool a3-mega · gpu-cluster:nodePools[0]" in out.stdout
    assert "✗ [mandatory] topology-multi-node-placement: pool 'a3-mega':" in out.stdout


@pytest.mark.slow
def test_cli_policy_pack_config_file_raises_a_limit_and_waives(tmp_path):
    config = tmp_path / "org.json"
    config.write_text(
        json.dumps(
            {
                "cost-stack-budget": {"maxUsdPerHour": 13000},
                "topology-multi-node-placement": {
                    "waivers": [
                        {
                            "rule": "topology-multi-node-placement",
                            "resource": "a3-mega",
                            "reason": "eval fleet: single-node jobs only",
                        }
                    ]
                },
            }
        )
    )
    for stack in ("eks-over-budget", "gke-a3-spread"):
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "preview",
                "--stack",
                stack,
                "--format",
                "json",
                "--policy-pack-config",
                str(config),
            ],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=180,
        )
        doc = json.loads(out.stdout)
        assert out.returncode == 0, doc["violations"]
        assert [v for v in doc["violations"] if v["enforcement"] == "mandatory"] == []
    assert doc["waived"] == [
        {
            "policy": "topology-multi-node-placement",
            "resource": "a3-mega",
            "group": "pool a3-mega",
            "pool": "a3-mega",
            "configPath": "gpu-cluster:nodePools[0]",
            "reason": "pool 'a3-mega' (eval fleet: single-node jobs only)",
        }
    ]


@pytest.mark.slow
def test_cli_invalid_policy_pack_config_exits_2_naming_the_key(tmp_path):
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"cost-stack-budget": {"maxUsdPerHour": "lots"}, "cost-gpu-hour-limt": "advisory"}))
    out = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "dev", "--policy-pack-config", str(config), "--color", "never"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 2, out.stdout
    assert f"{config}: cost-stack-budget.maxUsdPerHour: 'lots' is not of type 'number'" in out.stdout
