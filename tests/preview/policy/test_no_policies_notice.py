"""``--no-policies`` says in every output format that the pack was skipped: a clean exit 0 (or an empty
``violations`` / SARIF ``results``) without it reads as "the rules passed", which nothing checked."""

from __future__ import annotations

import json
from functools import cache

import jsonschema
import pytest

from preview.__main__ import main, render_report
from preview.policy.check import PolicyOptions
from preview.render.sarif import SKIPPED_TEXT
from preview.report import PreviewReport
from preview.run import preview_stack
from tests.policies.test_policy_sarif import SARIF_SUBSET

SKIPPED = "policy pack: skipped (--no-policies); no rule was checked"
SKIPPED_MD = "**Policy pack:** skipped (`--no-policies`); no rule was checked."


@cache
def dev(policies: bool) -> PreviewReport:
    return preview_stack("dev", policies=None if policies else PolicyOptions(enabled=False))


def test_text_and_markdown_say_the_pack_was_skipped():
    report = dev(False)
    assert report.exit_code == 0 and not report.policy_rules
    assert SKIPPED in render_report(report, "text", color=False)
    assert SKIPPED_MD in render_report(report, "markdown")


def test_a_run_with_the_pack_does_not_say_skipped():
    report = dev(True)
    text = render_report(report, "text", color=False)
    assert "skipped" not in text and f"policy pack: {len(report.policy_rules)} rules, no violations" in text
    assert "skipped" not in render_report(report, "markdown")


def test_json_says_the_pack_was_skipped_so_empty_violations_is_not_read_as_clean():
    doc = json.loads(render_report(dev(False), "json"))
    assert doc["violations"] == [] and doc["exitCode"] == 0
    assert doc["policyPack"] == {"ran": False, "reason": "--no-policies"}


def test_json_of_a_run_with_the_pack_counts_the_rules_it_checked():
    report = dev(True)
    doc = json.loads(render_report(report, "json"))
    assert doc["policyPack"] == {"ran": True, "rules": len(report.policy_rules)} and len(report.policy_rules) >= 25


def test_sarif_run_carries_a_warning_notification_when_the_pack_was_skipped():
    doc = json.loads(render_report(dev(False), "sarif"))
    jsonschema.validate(doc, SARIF_SUBSET)
    run = doc["runs"][0]
    assert run["results"] == [] and run["tool"]["driver"]["rules"] == []
    # SARIF 2.1.0 §3.20 invocation: executionSuccessful is required; §3.58 notification: message, level
    assert run["invocations"] == [
        {
            "executionSuccessful": True,
            "toolExecutionNotifications": [{"level": "warning", "message": {"text": SKIPPED_TEXT}}],
        }
    ]
    assert "--no-policies" in SKIPPED_TEXT and "skipped" in SKIPPED_TEXT


def test_sarif_of_a_run_with_the_pack_has_no_skip_notification():
    run = json.loads(render_report(dev(True), "sarif"))["runs"][0]
    assert "invocations" not in run and len(run["tool"]["driver"]["rules"]) == len(dev(True).policy_rules)


def test_json_of_an_invalid_stack_says_no_rule_was_checked(tmp_path, capsys):
    bad = tmp_path / "Pulumi.broken.yaml"
    bad.write_text("config:\n  gpu-cluster:cloud: gcp\n  gpu-cluster:region: us-centrl1\n")
    assert main(["--stack", "broken", "--stack-file", str(bad), "--format", "json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] and doc["policyPack"] == {"ran": False, "reason": "invalid configuration"}


@pytest.mark.parametrize("args", [["--stack", "fleet"], ["--stack", "fleet-gke", "--with", "gke-kueue,fleet"]])
def test_fleet_and_stacks_deployed_together_say_the_pack_was_skipped(args, capsys):
    assert main([*args, "--format", "json", "--no-policies"]) == 0
    assert json.loads(capsys.readouterr().out)["policyPack"] == {"ran": False, "reason": "--no-policies"}
