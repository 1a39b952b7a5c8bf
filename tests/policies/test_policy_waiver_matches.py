"""A waiver whose ``resource`` names no pool or resource of the stack waives nothing, and the pack says nothing about
it: the offline preview warns, naming the pools it could have meant; a waiver that matches (by pool name, resource
name or URN) is silent."""

from __future__ import annotations

import json

from preview.policy.check import PolicyOptions
from preview.run import preview_config
from tests.support.spec.stack_configs import GKE

RULE = "security-gke-secure-boot"
REASON = "the driver is compiled on the node; unsigned modules are refused"


def _warnings(tmp_path, *resources: str):
    config = tmp_path / "org.json"
    config.write_text(
        json.dumps({RULE: {"waivers": [{"rule": RULE, "resource": r, "reason": REASON} for r in resources]}})
    )
    report = preview_config("t", GKE, policies=PolicyOptions(config_file=config))
    return report, [w for w in report.warnings if "waives nothing" in w.problem]


def test_a_waiver_for_a_pool_that_does_not_exist_warns_with_the_close_name(tmp_path):
    _, warnings = _warnings(tmp_path, "h100x")
    assert [(w.path, w.value, w.fix, w.warning) for w in warnings] == [
        (f"{tmp_path / 'org.json'}: {RULE}.waivers[0].resource", "h100x", "did you mean 'h100'?", True)
    ]
    assert warnings[0].allowed.startswith("a pool (") and "h100" in warnings[0].allowed


def test_waivers_naming_a_pool_a_resource_or_a_urn_are_silent(tmp_path):
    report, _ = _warnings(tmp_path, "h100")
    pool = next(r for r in report.resources if r.type == "gcp:container/nodePool:NodePool")
    _, warnings = _warnings(tmp_path, "h100", pool.name, pool.urn)
    assert warnings == []
