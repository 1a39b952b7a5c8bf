"""The offline preview serves the policy pack in its own process by default (no interpreter boot, no gRPC round trip
per resource); ``--policy-pack-subprocess`` boots it exactly as the Pulumi CLI does. Both must find the same: every
example stack, and one with a pack config that sets limits, levels and a waiver, goes through both paths over the
same recorded resources and must give identical violations, waivers, warnings, rule metadata and cost notes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from catalog.loader import load_catalog
from preview.engine import PROJECT_ROOT, read_stack_file
from preview.policy.check import PolicyOptions, apply_policies
from preview.report import PreviewReport
from preview.run import preview_stack
from stacks.validate.load import decode_config, load_spec

EXAMPLES = sorted(
    p.name[len("Pulumi.") : -len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml") if p.name != "Pulumi.yaml"
)


def _findings(report: PreviewReport) -> dict:
    return {
        "violations": report.violations,
        "waived": report.waived,
        "rules": report.policy_rules,
        "warnings": [str(w) for w in report.warnings],
        "errors": [str(e) for e in report.errors],
        "notes": report.cost.notes if report.cost else None,
    }


def _both_paths(stack: str, config_file: Path | None = None) -> tuple[dict, dict]:
    """The same recording through the in-process path and the CLI's path."""
    no_pack = preview_stack(stack, policies=PolicyOptions(enabled=False))
    spec, _ = load_spec(decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")), load_catalog())
    results = []
    for subprocess in (False, True):
        report = copy.copy(no_pack)
        report.cost = copy.deepcopy(no_pack.cost)
        report.warnings = list(no_pack.warnings)
        apply_policies(report, spec, PolicyOptions(subprocess=subprocess, config_file=config_file))
        results.append(_findings(report))
    return results[0], results[1]


@pytest.mark.slow
@pytest.mark.parametrize("stack", EXAMPLES)
def test_in_process_and_cli_paths_find_the_same(stack):
    in_process, cli = _both_paths(stack)
    assert in_process == cli
    assert in_process["rules"], "the pack ran"


def test_the_paths_agree_under_a_pack_config_with_limits_levels_and_a_waiver(tmp_path):
    config = tmp_path / "org.json"
    config.write_text(
        json.dumps(
            {
                "all": "advisory",
                "cost-gpu-hour-limit": {"maxUsdPerGpuHour": 2.0, "enforcementLevel": "mandatory"},
                "cost-stack-budget": {"maxUsdPerHour": 100},
                "security-gke-secure-boot": {
                    "waivers": [
                        {
                            "rule": "security-gke-secure-boot",
                            "resource": "h100-mig",
                            "reason": "the GPU Operator compiles the driver on the node",
                        },
                        {
                            "rule": "security-gke-secure-boot",
                            "resource": "no-such-pool",
                            "reason": "a waiver that matches nothing",
                        },
                    ]
                },
            }
        )
    )
    in_process, cli = _both_paths("gke-operator-mig", config)
    assert in_process == cli
    assert {v["enforcement"] for v in in_process["violations"]} == {"mandatory", "advisory"}
    assert any("waives nothing" in w for w in in_process["warnings"])


@pytest.mark.slow
def test_the_preview_takes_the_in_process_path_unless_asked(monkeypatch):
    from preview.policy import analyzer

    monkeypatch.setattr(analyzer, "_in_process", [])
    monkeypatch.setattr(analyzer, "_shared", {})
    preview_stack("dev")
    assert (len(analyzer._in_process), analyzer._shared) == (1, {})
    preview_stack("dev", policies=PolicyOptions(subprocess=True))
    assert list(analyzer._shared) == [analyzer.PACK_DIR]
