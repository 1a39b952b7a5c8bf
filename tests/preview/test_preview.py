"""The offline preview end to end: every example stack, the JSON contract, exit codes, and invalid input."""

from __future__ import annotations

import json
import subprocess
import sys

import pulumi
import pytest

from preview.engine import PROJECT_ROOT, execute_program, install_mocks, read_stack_file
from preview.render.markdown import render_markdown
from preview.render.text import render_text
from preview.run import preview_config, preview_stack
from tests.support.spec.edit import edit, edits
from tests.support.policy.examples import REFUSED_EXAMPLES
from tests.support.spec.stack_configs import GKE

EXAMPLE_STACKS = sorted(
    p.name[len("Pulumi.") : -len(".yaml")]
    for p in PROJECT_ROOT.glob("Pulumi.*.yaml")
    if p.name[len("Pulumi.") : -len(".yaml")] not in REFUSED_EXAMPLES
)
"""Examples that must preview cleanly; the ones built to be refused by the policy pack have their own test."""


def test_the_required_example_stacks_exist():
    assert {"dev", "gke-h100-512", "eks-p5-efa"} <= set(EXAMPLE_STACKS)


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_example_stack_previews_cleanly(stack):
    report = preview_stack(stack)
    assert report.errors == [] and report.exit_code == 0
    assert report.resources, "the program registered nothing"
    assert report.cost.usd_per_hour_max > 0
    spec_pools = [
        p["name"] for p in read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml").get("gpu-cluster:nodePools", [])
    ]
    assert [p.pool for p in report.cost.pools] == spec_pools
    assert report.cost.pools or report.fleet, "only a fleet manager may have no GPU pool"


def test_the_512_gpu_stack_really_has_512_h100s():
    report = preview_stack("gke-h100-512")
    mega = next(p for p in report.cost.pools if p.pool == "h100-mega")
    assert (mega.machine_type, mega.gpus_per_node, mega.max_nodes) == ("a3-megagpu-8g", 8, 64)
    assert mega.gpus_per_node * mega.max_nodes == 512
    pool = next(r for r in report.resources if r.type == "gcp:container/nodePool:NodePool" and r.name == "h100-mega")
    assert pool.inputs["placementPolicy"] == {"type": "COMPACT"}
    assert pool.inputs["nodeConfig"]["reservationAffinity"]["consumeReservationType"] == "SPECIFIC_RESERVATION"


def test_cost_math_for_one_pool():
    # a3-highgpu-8g us-central1 $88.49/h
    report = preview_config("t", edits(GKE, {"nodePools[0].minNodes": 1, "nodePools[0].maxNodes": 4}))
    p = report.cost.pools[0]
    assert p.usd_per_node_hour == pytest.approx(88.49)
    assert p.usd_per_gpu_hour == pytest.approx(88.49 / 8)
    assert (p.usd_per_hour_min, p.usd_per_hour_max) == (pytest.approx(88.49), pytest.approx(4 * 88.49))
    assert p.usd_per_month_max == pytest.approx(4 * 88.49 * 730)
    fixed = {f.item.split(" (")[0]: f for f in report.cost.fixed}
    assert fixed["control plane"].usd_per_hour_max == pytest.approx(0.10)
    assert fixed["system pool"].usd_per_hour_max == pytest.approx(3 * 0.134023)
    assert report.cost.usd_per_hour_max == pytest.approx(4 * 88.49 + 0.10 + 3 * 0.134023)


@pytest.mark.slow
def test_json_contract_keys_and_no_secret_values():
    out = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "eks-p5-efa", "--format", "json"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {"stack", "resources", "cost", "violations", "policyPack", "errors"} <= set(doc)
    assert doc["policyPack"]["ran"] is True and doc["policyPack"]["rules"] >= 25  # [] above means checked
    assert doc["stack"] == "eks-p5-efa" and doc["errors"] == []
    assert [v for v in doc["violations"] if v["enforcement"] == "mandatory"] == []
    assert {"type", "name", "parent", "inputs"} <= set(doc["resources"][0])
    assert {"pools", "totals"} <= set(doc["cost"])
    assert doc["cost"]["totals"]["maxGpus"] == 16 * 8 + 4 * 8 + 6


def test_text_and_markdown_render_the_cost_table():
    report = preview_stack("dev")
    text = render_text(report, color=False)
    assert "l4" in text and "g2-standard-8" in text and "exit 0" in text and "$/GPU-h" in text
    md = render_markdown(report)
    assert md.startswith("### gpu-cluster preview: `dev`")
    assert "| l4 | `g2-standard-8` | L4 | spot | 0-2 | 1 | 0.480 |" in md
    assert "<details><summary>22 resources</summary>" in md  # cluster, NAT, KMS key, system + GPU pool, identities


@pytest.mark.slow
def test_cli_exits_2_with_every_error_and_no_traceback(tmp_path):
    bad = tmp_path / "Pulumi.broken.yaml"
    bad.write_text(
        "config:\n  gpu-cluster:cloud: gcp\n  gpu-cluster:region: us-centrl1\n"
        "  gpu-cluster:project: test-project-1\n  gpu-cluster:cluster: {name: ml}\n"
        "  gpu-cluster:nodePools:\n    - {name: a, machineType: a3-highgpu-8, zones: [x], maxNodes: 1}\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "broken", "--stack-file", str(bad)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    assert "gpu-cluster:region: no catalog data for gcp region 'us-centrl1'" in out.stdout
    assert "did you mean 'us-central1'?" in out.stdout
    assert "gpu-cluster:nodePools[0].machineType: pool 'a': unknown GPU machine type for gcp" in out.stdout
    assert "Nothing was created" in out.stdout


@pytest.mark.slow
def test_cli_unknown_stack_lists_the_stacks():
    out = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "nope"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "Pulumi.nope.yaml" in out.stderr and "dev" in out.stderr


def test_invalid_config_registers_nothing_even_when_the_program_runs():
    """__main__.py itself refuses bad config before the first resource (what `pulumi preview` would do)."""
    bad = edits(GKE, {"nodePools[0].minNodes": 9, "nodePools[0].maxNodes": 2})
    report = preview_config("t", bad)
    assert report.exit_code == 2 and report.resources == []
    monitor = install_mocks(bad)
    with pytest.raises(pulumi.RunError, match=r"gpu-cluster:nodePools\[0\]\.minNodes: pool 'h100': minNodes is larger"):
        execute_program()
    assert monitor.registered == []
    good = install_mocks(GKE)  # the same path with valid config does register: the check above can fail
    execute_program()
    assert len(good.registered) > 5


def test_private_endpoint_advice_only_when_no_authorized_networks():
    private = preview_config("t", edit(GKE, "cluster.authorizedNetworks", []))
    public = preview_config("t", GKE)
    endpoint = "gpu-cluster:cluster.authorizedNetworks"
    assert [w.problem for w in private.warnings if w.path == endpoint] == [
        "the new cluster's Kubernetes API gets a private endpoint only: `pulumi up` must run from inside the VPC to "
        "install the GPU runtime and scheduler"
    ]
    assert [w for w in public.warnings if w.path == endpoint] == []


def test_gpudirect_is_set_up_so_only_turning_it_off_warns():
    multi = preview_config("t", GKE)  # a3-highgpu-8g, multiNode: true: gets GPUDirect-TCPX
    off = preview_config("t", edit(GKE, "nodePools[0].fabric", {"mode": "off"}))
    assert [w for w in multi.warnings if w.path.startswith("gpu-cluster:nodePools[0]")] == []
    assert [w.path for w in off.warnings if "primary NIC" in w.problem] == ["gpu-cluster:nodePools[0].fabric.mode"]


def test_a_clean_policy_run_is_said_not_left_silent():
    checked = preview_stack("dev")
    assert checked.violations == [] and len(checked.policy_rules) >= 25
    assert f"policy pack: {len(checked.policy_rules)} rules, no violations" in render_text(checked, color=False)
    assert f"**Policy pack:** {len(checked.policy_rules)} rules, no violations." in render_markdown(checked)
    from preview.policy.check import PolicyOptions

    unchecked = preview_stack("dev", policies=PolicyOptions(enabled=False))
    skipped = render_text(unchecked, color=False)
    assert "policy pack: skipped (--no-policies)" in skipped and "no violations" not in skipped  # never "clean"
