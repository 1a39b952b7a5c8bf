"""Every output format of every example stack, as the command prints it: JSON and SARIF parse as strict JSON (no
NaN or Infinity, which strict JSON readers refuse); Markdown and text render and carry no non-finite number either."""

from __future__ import annotations

import json
from typing import Any

import pytest

from preview.__main__ import main, render_report
from preview.engine import PROJECT_ROOT
from preview.run import preview_stack

ALL_EXAMPLES = sorted(
    p.name[len("Pulumi.") : -len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml") if p.name != "Pulumi.yaml"
)


def strict(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("stack", ALL_EXAMPLES)
def test_every_format_of_every_example_is_strict(stack):
    report = preview_stack(stack)
    assert report.exit_code in (0, 1) and report.resources
    doc = strict(render_report(report, "json"))
    assert doc["exitCode"] == report.exit_code and doc["resources"]
    assert strict(render_report(report, "sarif"))["version"] == "2.1.0"
    for fmt in ("markdown", "text"):
        text = render_report(report, fmt, color=False)
        assert stack in text and "NaN" not in text and "Infinity" not in text


def test_the_diff_json_is_strict(capsys):
    code = main(["--stack", "dev", "--base-file", str(PROJECT_ROOT / "Pulumi.dev.yaml"), "--format", "json"])
    assert code == 0 and strict(capsys.readouterr().out)["head"]["state"] == "ok"
