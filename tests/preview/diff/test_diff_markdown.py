"""The PR-comment Markdown of the stack diff against golden files, plus its size limit.

The sides are built from real specs, facts and catalog prices, but with a small synthetic recording (one node pool
resource per pool) and violations set directly, so the golden files change only when the diff or its wording does,
not when a component gains an input. After a deliberate change regenerate them with
``UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/preview/diff/test_diff_markdown.py`` and review the diff.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import struct_pb2

from catalog import load_catalog
from preview.cost import stack_cost
from preview.diff.compare import diff_configs
from preview.diff.render_markdown import GITHUB_COMMENT_LIMIT, marker, render_diff_markdown
from preview.diff.render_text import render_diff_text
from preview.engine import Registered
from preview.report import PreviewReport
from preview.diff.replacement import GKE_NODE_POOL
from stacks.validate.issues import SpecError
from stacks.plan.facts import pool_facts
from stacks.validate.load import decode_config, load_spec
from tests.support.spec.edit import edit, edits

GOLDEN = Path(__file__).parent / "golden"
STACK = "research"
STACK_URN = f"urn:pulumi:{STACK}::gpu-cluster::pulumi:pulumi:Stack::gpu-cluster-{STACK}"

BASE: dict[str, Any] = {
    "gpu-cluster:cloud": "gcp",
    "gpu-cluster:project": "ml-research",
    "gpu-cluster:region": "us-central1",
    "gpu-cluster:cluster": {"name": "research", "authorizedNetworks": ["203.0.113.0/24"]},
    "gpu-cluster:nodePools": [
        {
            "name": "h100",
            "machineType": "a3-highgpu-8g",
            "zones": ["us-central1-a"],
            "minNodes": 0,
            "maxNodes": 8,
            "multiNode": True,
        },
        {
            "name": "l4",
            "machineType": "g2-standard-8",
            "zones": ["us-central1-a", "us-central1-b"],
            "maxNodes": 4,
            "capacity": {"type": "spot"},
        },
        {"name": "a100", "machineType": "a2-highgpu-1g", "zones": ["us-central1-a"], "maxNodes": 2},
    ],
    "gpu-cluster:scheduling": {
        "workload": "kubeflow",
        "queues": [
            {"name": "team-a", "quotas": [{"pool": "h100", "gpus": 64}]},
            {"name": "team-b", "quotas": [{"pool": "l4", "gpus": 4}, {"pool": "a100", "gpus": 2}]},
        ],
    },
}

BUDGET = {
    "policy": "cost-stack-budget",
    "enforcement": "mandatory",
    "severity": "high",
    "resource": "",
    "pool": None,
    "group": "stack",
    "message": "stack: the hourly cost at max autoscale is over the budget · observed: "
    "$1,425.61 per hour: h100 16 × $88.49 = $1,415.84, … · required: at most $1,000.00/hour, from "
    "maxUsdPerHour\nFix: lower maxNodes of the largest pools (h100), or have the platform team raise "
    "maxUsdPerHour of cost-stack-budget",
}
PRICE_AGE = {
    "policy": "cost-price-age",
    "enforcement": "advisory",
    "severity": "low",
    "resource": "l4",
    "pool": "l4",
    "group": "pool l4",
    "message": "pool 'l4': the price is old, so cost checks may be off · observed: the "
    "g2-standard-8 spot price is 400 days old · required: at most 180 days\nFix: refresh it",
}
SECURE_BOOT = {
    "policy": "security-gke-secure-boot",
    "enforcement": "advisory",
    "severity": "medium",
    "resource": "a100",
    "pool": "a100",
    "group": "pool a100",
    "message": "pool 'a100': Secure Boot is off · observed: nodeConfig.shieldedInstanceConfig."
    "enableSecureBoot false · required: true\nFix: turn it on",
}


def synthetic_previewer(violations: dict[str, list[dict[str, Any]]]):
    """Real spec, facts and prices; one recorded node pool per pool; the violations named by the config's tag."""
    cat = load_catalog()

    def run(stack: str, config: dict[str, Any], main: Path, stack_files: Any = None) -> PreviewReport:
        report = PreviewReport(stack=stack)
        try:
            spec, report.warnings = load_spec(decode_config({k: v for k, v in config.items() if k != "tag"}), cat)
        except SpecError as exc:
            report.errors = exc.errors
            return report
        report.cloud, report.region = spec.cloud.value, spec.region
        facts = [pool_facts(spec, p, cat) for p in spec.node_pools]
        report.cost = stack_cost(spec, facts, cat)
        report.gpu_runtime = [
            {"pool": f.name, "machineType": f.machine.machine_type, **f.runtime.as_dict()} for f in facts
        ]
        for pool, f in zip(spec.node_pools, facts):
            component = _registered("gpu-cluster:gcp:GkeGpuNodePool", pool.name, {}, STACK_URN)
            inputs = {
                "autoscaling": {"totalMinNodeCount": pool.min_nodes, "totalMaxNodeCount": pool.max_nodes},
                "nodeConfig": {
                    "machineType": pool.machine_type,
                    "spot": pool.capacity.type.value == "spot",
                    "guestAccelerators": [{"type": f.machine.accelerator, "count": f.gpus_per_node}],
                },
            }
            report.resources += [component, _registered(GKE_NODE_POOL, pool.name, inputs, component.urn)]
        report.violations = [dict(v) for v in violations.get(config.get("tag", ""), [])]
        return report

    return run


def _registered(type_: str, name: str, inputs: dict[str, Any], parent: str) -> Registered:
    return Registered(
        type=type_,
        name=name,
        urn=f"urn:pulumi:{STACK}::gpu-cluster::{type_}::{name}",
        parent_urn=parent,
        custom=not type_.startswith("gpu-cluster:"),
        inputs=inputs,
        raw_inputs=struct_pb2.Struct(),
    )


def scenario(name: str):
    """(base config, head config, violations by tag, max_chars) of each golden scenario."""
    if name == "resize-quota-policy":
        head = edits(BASE, {"nodePools[0].maxNodes": 16, "scheduling.queues[0].quotas[0].gpus": 32})
        # "tag" is no config key: it tells the synthetic previewer which side it previews
        base, head = {**BASE, "tag": "base"}, {**head, "tag": "head"}
        return base, head, {"base": [PRICE_AGE, SECURE_BOOT], "head": [SECURE_BOOT, BUDGET]}, GITHUB_COMMENT_LIMIT
    if name == "replace-add-remove":
        head = edits(
            BASE,
            {
                "nodePools[1].machineType": "g2-standard-24",
                "nodePools[2]": {
                    "name": "h200",
                    "machineType": "a3-ultragpu-8g",
                    "zones": ["us-central1-b"],
                    "maxNodes": 2,
                    "multiNode": True,
                },
                "scheduling.queues[1].quotas": [{"pool": "l4", "gpus": 8}],
            },
        )
        return BASE, head, {}, GITHUB_COMMENT_LIMIT
    if name == "new-stack":
        return None, BASE, {}, GITHUB_COMMENT_LIMIT
    if name == "invalid-head":
        head = edits(BASE, {"nodePools[0].machineType": "a3-highgpu-9g", "nodePools[1].maxNodes": 0})
        return BASE, head, {}, GITHUB_COMMENT_LIMIT
    if name == "no-change":
        return BASE, copy.deepcopy(BASE), {}, GITHUB_COMMENT_LIMIT
    if name == "cut-to-fit":
        base, head, violations, _ = scenario("resize-quota-policy")
        return base, head, violations, CUT_TO_FIT_CHARS
    raise ValueError(name)


CUT_TO_FIT_CHARS = 1800
"""Room for the summary, changes, policy and cost sections, not for the resource and setting details."""
SCENARIOS = ["resize-quota-policy", "replace-add-remove", "new-stack", "invalid-head", "no-change", "cut-to-fit"]


def render(name: str) -> str:
    base, head, violations, max_chars = scenario(name)
    diff = diff_configs(STACK, base, head, "main", previewer=synthetic_previewer(violations))
    return render_diff_markdown(diff, max_chars=max_chars)


@pytest.mark.parametrize("name", SCENARIOS)
def test_markdown_matches_golden(name):
    rendered = render(name)
    path = GOLDEN / f"{name}.md"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rendered, encoding="utf-8")
    assert rendered == path.read_text(encoding="utf-8"), f"{path.name} changed: review, then UPDATE_GOLDEN=1"


def test_the_review_scenario_says_what_the_issue_asks_for():
    md = render("resize-quota-policy")
    assert md.startswith(marker(STACK))
    assert "queue `team-a`: quota h100 64 → 32 GPUs" in md
    assert "pool `h100`: max nodes 8 → 16, max GPUs 64 → 128 · +$707.92/h at max" in md
    assert "**new** · **mandatory** · `cost-stack-budget`" in md and "resolved · advisory · `cost-price-age`" in md
    order = [md.index(s) for s in ("**Changes**", "**Policy**", "**Cost**", "<details><summary>Resources")]
    assert order == sorted(order)


def test_replacement_is_called_out_with_the_provider_field():
    md = render("replace-add-remove")
    assert "**replaces the node pool**: `nodeConfig.guestAccelerators[0].count` changed" in md
    assert "pool `h200` added" in md and "pool `a100` removed" in md


def test_cut_to_fit_stays_under_the_limit_and_keeps_the_summary():
    md = render("cut-to-fit")
    assert len(md) <= CUT_TO_FIT_CHARS
    assert "+$707.92/h at max" in md and "**Changes**" in md


def test_a_huge_diff_fits_a_github_comment():
    head = edit(
        BASE,
        "nodePools",
        BASE["gpu-cluster:nodePools"]
        + [
            {"name": f"extra-{i:03d}", "machineType": "g2-standard-8", "zones": ["us-central1-a"], "maxNodes": 1}
            for i in range(400)
        ],
    )
    diff = diff_configs(STACK, BASE, head, "main", previewer=synthetic_previewer({}))
    md = render_diff_markdown(diff)
    assert len(md) <= GITHUB_COMMENT_LIMIT and "extra-000" in md
    assert len(render_diff_markdown(diff, max_chars=10**7)) > GITHUB_COMMENT_LIMIT  # it really had to shrink


def test_text_rendering_has_the_same_facts():
    base, head, violations, _ = scenario("resize-quota-policy")
    text = render_diff_text(diff_configs(STACK, base, head, "main", previewer=synthetic_previewer(violations)))
    assert "queue team-a: quota h100 64 → 32 GPUs" in text
    assert "NEW" in text and "cost-stack-budget" in text and "resolved" in text
    assert "total" in text and "+$707.92" in text


def test_docs_example_comment_is_the_golden_file():
    page = (Path(__file__).resolve().parents[3] / "docs" / "diffs-and-ci.md").read_text(encoding="utf-8")
    start, end = "<!-- BEGIN EXAMPLE DIFF COMMENT -->\n", "<!-- END EXAMPLE DIFF COMMENT -->"
    example = page[page.index(start) + len(start) : page.index(end)]
    assert example == (GOLDEN / "resize-quota-policy.md").read_text(encoding="utf-8"), (
        "copy tests/preview/diff/golden/resize-quota-policy.md into the example in docs/diffs-and-ci.md"
    )
