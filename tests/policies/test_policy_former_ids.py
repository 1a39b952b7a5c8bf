"""Rule IDs used to embed the Checkov ID (``security-gke-auto-repair-ckv-gcp-9``). The former IDs keep working as
pack-config keys and as the ``rule`` of a waiver, and the preview warns with the current ID."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from policies.pack import RULES
from preview.engine import PROJECT_ROOT
from preview.policy.config import former_ids, parse_config_text, reconcile, unknown_key_warnings
from tests.support.spec.edit import edit
from tests.support.policy.harness import Pack, baseline, find, wire, with_props

NP = "gcp:container/nodePool:NodePool"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
OLD_REPAIR, NEW_REPAIR = "security-gke-auto-repair-ckv-gcp-9", "security-gke-auto-repair"
OLD_HOPS, NEW_HOPS = "security-eks-imds-hop-limit-ckv-aws-341", "security-eks-imds-hop-limit"
WAIVER = {"resource": "h100", "reason": "repairs handled by our own node doctor"}


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def _broken_pool():
    rs = baseline("gcp")
    pool = find(rs, NP, "h100")
    return rs, with_props(pool, edit(wire(pool), "management.autoRepair", False))


def test_the_pack_lists_every_former_id_with_its_rule(pack):
    assert former_ids(pack.info) == {former: r.id for r in RULES for former in r.former_ids}
    assert len(former_ids(pack.info)) == 11 and OLD_REPAIR in former_ids(pack.info)


@pytest.mark.parametrize(
    "key, rule",
    [(NEW_REPAIR, OLD_REPAIR), (OLD_REPAIR, OLD_REPAIR), (OLD_REPAIR, NEW_REPAIR)],
    ids=["waiver-names-the-former-id", "both-former", "key-is-the-former-id"],
)
def test_a_waiver_naming_the_former_id_or_under_its_key_still_waives(pack, key, rule):
    rs, broken = _broken_pool()
    assert [d[0] for d in pack.resource(broken, rs)] == [NEW_REPAIR]
    pack.configure({key: {"waivers": [{**WAIVER, "rule": rule}]}})
    try:
        assert pack.resource(broken, rs) == []
        assert pack.not_applicable(broken, rs) == [(NEW_REPAIR, f"waived: pool 'h100' ({WAIVER['reason']})")]
    finally:
        pack.configure()


def test_settings_and_level_under_the_former_key_apply_to_the_rule_and_the_current_key_wins(pack):
    given = parse_config_text(json.dumps({OLD_HOPS: {"maxHopLimit": 2, "enforcementLevel": "advisory"}}), "org.json")
    merged = reconcile(pack.info, given, "org.json")
    assert OLD_HOPS not in merged
    assert (merged[NEW_HOPS].level, merged[NEW_HOPS].properties["maxHopLimit"]) == ("advisory", 2)
    both = parse_config_text(json.dumps({NEW_HOPS: {"maxHopLimit": 3}, OLD_HOPS: {"maxHopLimit": 2}}), "org.json")
    assert reconcile(pack.info, both, "org.json")[NEW_HOPS].properties["maxHopLimit"] == 3
    rs = baseline("aws")
    template = find(rs, LT, "p5-lt")
    two_hops = with_props(template, edit(wire(template), "metadataOptions.httpPutResponseHopLimit", 2))
    pack.configure({OLD_HOPS: {"maxHopLimit": 2}})
    try:
        assert pack.resource(two_hops, rs) == []
    finally:
        pack.configure()
    assert [d[0] for d in pack.resource(two_hops, rs)] == [NEW_HOPS]


def test_former_ids_warn_and_name_the_current_id(pack):
    given = parse_config_text(
        json.dumps({OLD_REPAIR: {"waivers": [{**WAIVER, "rule": OLD_REPAIR}]}, OLD_HOPS: {"maxHopLimt": 2}}), "org.json"
    )
    warnings = unknown_key_warnings(pack.info, given, "org.json")
    assert [(w.path, w.problem, w.fix, w.warning) for w in warnings] == [
        (
            "org.json: security-gke-auto-repair-ckv-gcp-9.waivers[0].rule",
            f"{OLD_REPAIR} is a deprecated rule ID (rule IDs no longer embed the Checkov ID); it still applies to "
            f"{NEW_REPAIR}",
            f"rename it to '{NEW_REPAIR}'",
            True,
        ),
        (
            "org.json: security-gke-auto-repair-ckv-gcp-9",
            f"{OLD_REPAIR} is a deprecated rule ID (rule IDs no longer embed the Checkov ID); it still applies to "
            f"{NEW_REPAIR}",
            f"rename it to '{NEW_REPAIR}'",
            True,
        ),
        (
            "org.json: security-eks-imds-hop-limit-ckv-aws-341",
            f"{OLD_HOPS} is a deprecated rule ID (rule IDs no longer embed the Checkov ID); it still applies to "
            f"{NEW_HOPS}",
            f"rename it to '{NEW_HOPS}'",
            True,
        ),
        (
            "org.json: security-eks-imds-hop-limit-ckv-aws-341.maxHopLimt",  # its settings are checked as the rule's
            "this rule has no such setting, so it is ignored",
            "did you mean 'maxHopLimit'?",
            True,
        ),
    ]


@pytest.mark.slow
def test_the_preview_applies_a_former_id_and_shows_the_deprecation(tmp_path):
    config = tmp_path / "org.json"
    config.write_text(json.dumps({"security-gke-secure-boot-ckv-gcp-68": "advisory"}))
    out = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "dev", "--format", "json", "--policy-pack-config", str(config)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    doc = json.loads(out.stdout)
    assert out.returncode == 0, doc["errors"]
    assert [(w["path"], w["fix"], w["severity"]) for w in doc["warnings"] if "deprecated" in w["problem"]] == [
        (f"{config}: security-gke-secure-boot-ckv-gcp-68", "rename it to 'security-gke-secure-boot'", "warning")
    ]
