"""A diff run with ``--no-policies`` says the pack was skipped in every format: an empty policy delta from a pack that
never ran must not read as "no violations" or "the same policy results"."""

from __future__ import annotations

import json
from functools import cache

from preview.diff.compare import StackDiff, default_previewer, diff_configs
from preview.diff.render_markdown import render_diff_markdown
from preview.diff.render_text import render_diff_text
from preview.policy.check import PolicyOptions
from tests.support.spec.edit import edit
from tests.support.spec.stack_configs import GKE

SKIPPED = {"ran": False, "reason": "--no-policies"}


@cache
def diff(policies: bool, changed: bool) -> StackDiff:
    head = edit(GKE, "nodePools[0].maxNodes", 3) if changed else GKE
    previewer = default_previewer(None if policies else PolicyOptions(enabled=False))
    return diff_configs("t", GKE, head, "main", previewer=previewer)


def test_unchanged_diff_without_the_pack_does_not_claim_the_same_policy_results():
    d = diff(False, False)
    assert not d.has_changes
    line = "No change: both sides render the same resources and cost; the policy pack was skipped (--no-policies)."
    assert line in render_diff_text(d) and line in render_diff_markdown(d)


def test_changed_diff_without_the_pack_says_skipped_not_no_violations():
    d = diff(False, True)
    assert d.has_changes
    for out in (render_diff_text(d), render_diff_markdown(d)):
        assert "policy: skipped (--no-policies)" in out and "no violations" not in out


def test_diff_json_says_for_each_side_whether_the_pack_ran():
    doc = json.loads(json.dumps(diff(False, True).as_dict()))
    assert doc["base"]["policyPack"] == SKIPPED and doc["head"]["policyPack"] == SKIPPED
    assert doc["policy"] == {"new": [], "resolved": [], "unchanged": [], "reworded": []}
    checked = diff(True, True)
    assert checked.as_dict()["head"]["policyPack"] == {"ran": True, "rules": len(checked.head.report.policy_rules)}


def test_a_diff_with_the_pack_keeps_its_wording():
    assert "No change: both sides render the same resources, cost and policy results." in render_diff_text(
        diff(True, False)
    )
    assert "skipped" not in render_diff_text(diff(True, True))
