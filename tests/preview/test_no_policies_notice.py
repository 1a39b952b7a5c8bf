"""``--no-policies`` says in the output that the pack was skipped: a clean exit 0 without it reads as "the rules
passed", which nothing checked."""

from __future__ import annotations

from preview.policy.check import PolicyOptions
from preview.render.markdown import render_markdown
from preview.render.text import render_text
from preview.run import preview_stack

SKIPPED = "policy pack: skipped (--no-policies); no rule was checked"


def test_text_and_markdown_say_the_pack_was_skipped():
    report = preview_stack("dev", policies=PolicyOptions(enabled=False))
    assert report.exit_code == 0 and not report.policy_rules
    assert SKIPPED in render_text(report, color=False, width=200)
    assert "**Policy pack:** skipped (`--no-policies`); no rule was checked." in render_markdown(report)


def test_a_run_with_the_pack_does_not_say_skipped():
    report = preview_stack("dev")
    text = render_text(report, color=False, width=200)
    assert "skipped" not in text and f"policy pack: {len(report.policy_rules)} rules, no violations" in text
