"""The pack as a whole: rule metadata (meta-test), the CLI's boot path over gRPC, the CLI's config
reconciliation, the generated rule reference, and the import direction between layers."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pulumi.runtime.proto import analyzer_pb2 as apb

from catalog import load_catalog
from policies.pack import RULES, pack_arguments
from policies.resources import POOL_LABEL_KEY
from policies.rule import CHECKOV_ID, ID_PATTERN, Category
from preview.policy.analyzer import LEVELS, InProcessAnalyzer, SubprocessAnalyzer, pack_python
from preview.engine import PROJECT_ROOT
from preview.policy.config import (
    PolicyConfigError,
    configure_request,
    parse_config_text,
    reconcile,
    unknown_key_warnings,
)
from stacks.spec.stack import POOL_LABEL_KEY as SPEC_POOL_LABEL_KEY
from tests.support.spec.edit import edit
from tests.support.policy.harness import baseline, find, wire, with_props

RULE_FILES = sorted((PROJECT_ROOT / "policies" / "rules").glob("[a-z]*.py"))


NO_CHECKOV = {
    "security-team-namespace-admission",
    "security-device-annotation-policy",
    "security-fleet-worker-token",
    "security-unauthenticated-components",
    "security-network-policy-enforcement",
    "security-kueue-unqueued-jobs",
    "security-authorized-network-width",
    "security-gke-secrets-encryption",
    "security-namespace-default-deny",
}
"""Tenancy rules (tenants never escape their lane): they join several resources (namespaces, admission policies,
NetworkPolicies, Kueue's configuration), which no single Checkov resource check does; CKV_GCP_18 only refuses
0.0.0.0/0. OSS Checkov has no check on GKE's databaseEncryption (shared facts, security-and-reliability.md)."""


def test_every_rule_has_id_name_severity_remediation_and_docs():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids)), "rule IDs must be unique"
    docs = (PROJECT_ROOT / "policies" / "RULES.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert ID_PATTERN.match(rule.id), rule.id
        assert rule.id.startswith(rule.category.value + "-")
        assert rule.title and rule.title[0].isupper() and not rule.title.endswith("."), rule.id
        assert rule.description.endswith(".") and len(rule.description) < 200, rule.id
        assert rule.why and rule.remediation and rule.severity and rule.enforcement and rule.applies_to, rule.id
        assert rule.url == f"policies/RULES.md#{rule.id}" and f"\n## {rule.id}\n" in docs
        for name, schema in rule.schema_properties().items():
            assert re.match(r"^[a-z][A-Za-z0-9]*$", name) and "default" in schema and schema.get("description"), (
                rule.id,
                name,
            )
        if rule.checkov:  # the Checkov check it re-implements is metadata, not part of the ID
            assert (
                CHECKOV_ID.match(rule.checkov)
                and "ckv" not in rule.id
                and rule.checkov in rule.policy(load_catalog()).tags
            )
            assert f"Checkov {rule.checkov}" in docs.split(f"\n## {rule.id}\n")[1].split("\n## ")[0]
        if rule.category == Category.SECURITY and rule.checkov is None:
            assert "helm" in rule.id or "credentials" in rule.id or rule.id in NO_CHECKOV, (
                f"{rule.id}: no Checkov ID maps?"
            )
        for former in rule.former_ids:  # old IDs stay accepted, never clash with a current one
            assert ID_PATTERN.match(former) and former not in ids and former.startswith(rule.id + "-"), former


def test_one_rule_per_file_named_after_its_id_and_every_file_is_in_the_pack():
    rules = [importlib.import_module(f"policies.rules.{f.stem}").RULE for f in RULE_FILES]
    assert [r.id.replace("-", "_") for r in rules] == [f.stem for f in RULE_FILES]
    assert sorted(r.id for r in rules) == sorted(r.id for r in RULES)


def test_pack_main_only_assembles_the_pack():
    main = (PROJECT_ROOT / "policies" / "__main__.py").read_text(encoding="utf-8")
    tree = ast.parse(main)
    assert [type(n).__name__ for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom, ast.Expr))] == []
    assert "PolicyPack(**pack_arguments())" in main


@pytest.mark.slow
def test_pool_label_key_is_the_specs_and_defined_once():
    assert POOL_LABEL_KEY is SPEC_POOL_LABEL_KEY
    defined = []
    for layer in ("catalog", "components", "policies", "preview", "stacks", "render"):
        for path in sorted((PROJECT_ROOT / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, ast.AnnAssign)
                    else []
                )
                for t in targets:
                    if isinstance(t, ast.Name) and t.id in ("POOL_LABEL_KEY", "GPU_TAINT_KEY"):
                        defined.append((t.id, str(path.relative_to(PROJECT_ROOT))))
    assert sorted(defined) == [("GPU_TAINT_KEY", "stacks/spec/stack.py"), ("POOL_LABEL_KEY", "stacks/spec/stack.py")]


def test_pack_boots_exactly_like_the_cli_and_answers_over_grpc():
    assert (
        pack_python(PROJECT_ROOT / "policies") == str(PROJECT_ROOT / ".venv" / "bin" / "python")
        or not (PROJECT_ROOT / ".venv" / "bin" / "python").exists()
    )
    with SubprocessAnalyzer(PROJECT_ROOT / "policies") as pack:  # python -u -m pulumi.policy 127.0.0.1:0 .
        info = pack.info()
        assert info.name == "gpu-cluster-guardrails"
        assert [p.name for p in info.policies] == [r.id for r in RULES]
        assert {p.name: p.policy_type for p in info.policies}["cost-stack-budget"] == apb.POLICY_TYPE_STACK
        pack.configure_stack("t")
        pack.configure(
            configure_request(
                reconcile(info, parse_config_text('{"cost-gpu-hour-limit": {"maxUsdPerGpuHour": 5}}', "t"))
            )
        )
        rs = baseline("gcp")
        pool = find(rs, "gcp:container/nodePool:NodePool", "h100")
        providers = {r.urn: r for r in rs if r.type.startswith("pulumi:providers:")}
        response = pack.analyze(pool, providers)
        assert [(d.policyName, LEVELS[d.enforcementLevel]) for d in response.diagnostics] == [
            ("cost-gpu-hour-limit", "mandatory")
        ]
        assert "over the limit · observed: $11.06 per GPU-hour" in response.diagnostics[0].message
        assert pack.analyze_stack(rs, providers).diagnostics == []


def test_reconciliation_matches_the_cli_defaults_initial_config_file_and_all():
    args = pack_arguments()
    from pulumi_policy import EnforcementLevel

    args["initial_config"] = {
        "cost-stack-budget": {"maxUsdPerHour": 500.0},
        "cost-price-age": EnforcementLevel.DISABLED,
    }
    info = InProcessAnalyzer(args).info()
    base = reconcile(info, {})
    assert base["cost-gpu-hour-limit"].level == "mandatory"
    assert base["cost-gpu-hour-limit"].properties["maxUsdPerGpuHour"] == 15.0  # schema default
    assert base["cost-stack-budget"].properties["maxUsdPerHour"] == 500.0  # initialConfig over the default
    assert base["cost-price-age"].level == "disabled"
    given = parse_config_text(
        json.dumps({"all": "advisory", "cost-stack-budget": {"maxUsdPerHour": 900, "enforcementLevel": "mandatory"}}),
        "t",
    )
    merged = reconcile(info, given)
    assert (
        merged["cost-stack-budget"].level == "mandatory"
        and merged["cost-stack-budget"].properties["maxUsdPerHour"] == 900
    )  # the file wins, per key
    assert merged["topology-gpu-taint"].level == "advisory"  # "all" applies to the rest
    assert merged["cost-stack-budget"].properties["priceOverrides"] == []  # shallow merge keeps defaults


def test_the_packs_own_defaults_validate_so_the_offline_preview_may_skip_the_schema_check():
    """The in-process preview skips the JSON-schema check when no config file is given (``defaults_known_valid``):
    that is only the same result because every rule's defaults and initialConfig pass its schema, checked here as
    the CLI checks them; and a given config is still validated on that path."""
    from preview.policy import config as config_module

    info = InProcessAnalyzer().info()
    checked = reconcile(info, {})  # raises PolicyConfigError if any default broke its rule's schema
    skipped = reconcile(info, {}, defaults_known_valid=True)
    assert {k: (v.level, v.properties) for k, v in checked.items()} == {
        k: (v.level, v.properties) for k, v in skipped.items()
    }
    assert len(checked) == len(info.policies) > 50
    bad = parse_config_text('{"cost-gpu-hour-limit": {"maxUsdPerGpuHour": "cheap"}}', "org.json")
    with pytest.raises(PolicyConfigError, match="cheap"):
        config_module.reconcile(info, bad, "org.json", defaults_known_valid=True)


def test_invalid_config_is_refused_with_the_key_and_unknown_keys_warn():
    info = InProcessAnalyzer().info()
    with pytest.raises(PolicyConfigError) as exc:
        reconcile(
            info,
            parse_config_text(
                json.dumps(
                    {
                        "cost-gpu-hour-limit": {
                            "waivers": [
                                {"rule": "cost-stack-budget", "resource": "a", "reason": "copied from the wrong rule"}
                            ]
                        }
                    }
                ),
                "org.json",
            ),
            "org.json",
        )
    assert exc.value.issues[0].path == "org.json: cost-gpu-hour-limit.waivers.0.rule"
    assert "'cost-stack-budget' is not one of ['cost-gpu-hour-limit']" in exc.value.issues[0].problem
    with pytest.raises(PolicyConfigError, match="not a valid enforcement level"):
        parse_config_text('{"all": "blocking"}', "org.json")
    warnings = unknown_key_warnings(
        info,
        parse_config_text('{"cost-gpu-hour-limt": "advisory", "cost-stack-budget": {"maxUsdPerHr": 1}}', "org.json"),
        "org.json",
    )
    assert [(w.path, w.fix) for w in warnings] == [
        ("org.json: cost-gpu-hour-limt", "did you mean 'cost-gpu-hour-limit'?"),
        ("org.json: cost-stack-budget.maxUsdPerHr", "did you mean 'maxUsdPerHour'?"),
    ]


def test_unknown_values_at_preview_are_decided_by_the_rule_not_a_crash():
    rs = baseline("aws")
    template = find(rs, "aws:ec2/launchTemplate:LaunchTemplate", "p5-lt")
    unknown = edit(wire(template), "placement.groupName", "04da6b54-80e4-46f7-96ec-b56ff0331ba9")
    from tests.support.policy.harness import Pack

    pack = Pack()
    assert pack.stack([with_props(template, unknown) if r is template else r for r in rs]) == []


def test_rule_reference_is_current():
    out = subprocess.run(
        [sys.executable, "-m", "policies.docs", "--check"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr + " (run: .venv/bin/python -m policies.docs --write)"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize(
    "layer,forbidden",
    [
        ("policies", {"components"}),
        ("catalog", {"components"}),
        ("render", {"pulumi", "pulumi_gcp", "pulumi_aws", "pulumi_kubernetes", "pulumi_policy", "components"}),
    ],
)
def test_import_direction(layer, forbidden):
    files = sorted((PROJECT_ROOT / layer).rglob("*.py"))
    assert files
    bad = {str(f.relative_to(PROJECT_ROOT)): sorted(_imports(f) & forbidden) for f in files if _imports(f) & forbidden}
    assert bad == {}


def test_the_pack_hands_the_catalog_it_loaded_to_the_rules_that_read_it():
    """Rules never load the catalog themselves: the one given to the pack decides (here: one without prices)."""
    from tests.support.policy.harness import baseline as recorded_baseline

    readers = {r.id for r in RULES if r.reads_catalog}
    assert "cost-gpu-hour-limit" in readers and not any(r.startswith("security-") for r in readers)
    with pytest.raises(ValueError, match="reads the catalog"):
        next(r for r in RULES if r.id == "cost-gpu-hour-limit").policy()
    no_prices = dataclasses.replace(load_catalog(), prices={})
    analyzer = InProcessAnalyzer(pack_arguments(no_prices))
    analyzer.configure_stack("t")
    analyzer.configure(configure_request(reconcile(analyzer.info(), {})))
    rs = recorded_baseline("gcp")
    pool = find(rs, "gcp:container/nodePool:NodePool", "h100")
    providers = {r.urn: r for r in rs if r.type.startswith("pulumi:providers:")}
    messages = [
        d.message for d in analyzer.analyze(pool, providers).diagnostics if d.policyName == "cost-gpu-hour-limit"
    ]
    assert len(messages) == 1 and "no price is known for the pool" in messages[0]


def test_only_entry_points_load_the_catalog():
    """The pack (when it assembles), the preview run and the Pulumi program load it; everything else receives it."""
    calls = sorted(
        str(f.relative_to(PROJECT_ROOT))
        for layer in ("components", "compose", "policies", "preview")
        for f in (PROJECT_ROOT / layer).rglob("*.py")
        if "load_catalog()" in f.read_text(encoding="utf-8")
    )
    assert calls == ["policies/pack.py", "preview/run.py"]
