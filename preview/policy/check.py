"""Run the policy pack over a recording, the way ``pulumi preview --policy-pack`` does, and turn its
diagnostics into the preview's violations (grouped by pool, with the config path the user wrote)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from pulumi.runtime.proto import analyzer_pb2 as apb

from preview.policy.analyzer import LEVELS, SEVERITIES, Analyzer
from preview.engine import Registered
from preview.policy.config import configure_request, load_config_file, reconcile, unknown_key_warnings
from preview.policy.overrides import override_notes, overrides_in
from preview.policy.violations import Locator
from preview.policy.waivers import unmatched_waiver_warnings
from stacks.validate.issues import SpecIssue

WAIVED_PREFIX = "waived: "
POOL_SUBJECT = re.compile(r"^pool '([^']+)'")


@dataclass
class PolicyOutcome:
    violations: list[dict[str, Any]] = field(default_factory=list)
    waived: list[dict[str, Any]] = field(default_factory=list)
    rules: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[SpecIssue] = field(default_factory=list)
    pack: str = ""
    price_overrides: dict[str, list[dict]] = field(default_factory=dict)
    """priceOverrides per cost rule, as configured (``overrides.overrides_in``)."""


def rule_metadata(info: apb.AnalyzerInfo) -> list[dict[str, Any]]:
    return [
        {
            "id": p.name,
            "title": p.displayName,
            "description": p.description,
            "enforcement": LEVELS[p.enforcementLevel],
            "severity": SEVERITIES[p.severity],
            "remediation": p.remediation_steps,
            "url": p.url,
            "tags": list(p.tags),
            "config": json_format.MessageToDict(p.configSchema.properties) if p.HasField("configSchema") else {},
        }
        for p in info.policies
    ]


def check_policies(
    analyzer: Analyzer,
    stack: str,
    resources: list[Registered],
    pool_paths: dict[str, str],
    cluster_path: str | None = None,
    config_file: Path | None = None,
    own_pack: bool = False,
) -> PolicyOutcome:
    """GetAnalyzerInfo, ConfigureStack, Configure (CLI reconciliation), Analyze per resource, AnalyzeStack.
    Raises PolicyConfigError when the config file is invalid. ``own_pack``: the project's pack served in this
    process, whose defaults are known valid (``reconcile``)."""
    info = analyzer.info()
    given = load_config_file(config_file) if config_file else {}
    source = str(config_file) if config_file else "policy pack config"
    config = reconcile(info, given, source, defaults_known_valid=own_pack)
    outcome = PolicyOutcome(
        rules=rule_metadata(info),
        warnings=unknown_key_warnings(info, given, source),
        pack=info.name,
        price_overrides=overrides_in(config),
    )
    outcome.warnings += unmatched_waiver_warnings(given, resources, pool_paths, source)
    analyzer.configure_stack(stack)
    analyzer.configure(configure_request(config))
    providers = {r.urn: r for r in resources if r.type.startswith("pulumi:providers:")}
    locator = Locator(resources, pool_paths, cluster_path)
    rules = {r["id"]: r for r in outcome.rules}
    for r in resources:
        response = analyzer.analyze(r, providers)
        _collect(outcome, response, r.urn, r, locator, rules)
    by_urn = {r.urn: r for r in resources}
    stack_response = analyzer.analyze_stack(resources, providers)
    for d in stack_response.diagnostics:
        _add(outcome, d, d.urn, by_urn.get(d.urn), locator, rules)
    for na in stack_response.not_applicable:
        _waived(outcome, na, "", None, locator)
    # resources arrive in registration order, which varies run to run (the SDK registers from a thread pool):
    # sorted, the same stack gives the same JSON every time
    outcome.violations.sort(key=lambda v: (v["urn"], v["policy"], v["message"]))
    return outcome


def _collect(
    outcome: PolicyOutcome,
    response: apb.AnalyzeResponse,
    urn: str,
    r: Registered,
    locator: Locator,
    rules: dict[str, dict],
) -> None:
    for d in response.diagnostics:
        _add(outcome, d, urn, r, locator, rules)
    for na in response.not_applicable:
        _waived(outcome, na, urn, r, locator)


def _add(
    outcome: PolicyOutcome,
    d: apb.AnalyzeDiagnostic,
    urn: str,
    r: Registered | None,
    locator: Locator,
    rules: dict[str, dict],
) -> None:
    group, pool, path = locator.place(urn)
    message = d.message
    if d.description and message.startswith(d.description + "\n"):
        message = message[len(d.description) + 1 :]  # the SDK prefixes every message with the description
    rule = rules.get(d.policyName, {})
    outcome.violations.append(
        {
            "policy": d.policyName,
            "title": rule.get("title", ""),
            "enforcement": LEVELS[d.enforcementLevel],
            "severity": SEVERITIES[d.severity],
            "resource": r.name if r else "",
            "resourceType": r.type if r else "",
            "urn": urn,
            "group": group,
            "pool": pool,
            "configPath": path,
            "message": message,
            "description": d.description,
            "url": rule.get("url", ""),
        }
    )


def _waived(
    outcome: PolicyOutcome, na: apb.PolicyNotApplicable, urn: str, r: Registered | None, locator: Locator
) -> None:
    """One entry per waived subject; stack rules carry no URN, so their subject (``pool 'x'``) places them."""
    if not na.reason.startswith(WAIVED_PREFIX):
        return
    for item in na.reason[len(WAIVED_PREFIX) :].split("; "):
        group, pool, path = locator.place(urn)
        named = POOL_SUBJECT.match(item)
        if not urn and named:
            pool = named.group(1)
            group, path = f"pool {pool}", locator.pool_paths.get(pool)
        outcome.waived.append(
            {
                "policy": na.policy_name,
                "resource": r.name if r else (pool or ""),
                "group": group,
                "pool": pool,
                "configPath": path,
                "reason": item,
            }
        )


@dataclass
class PolicyOptions:
    """How the preview runs the policy pack: on by default, like ``pulumi preview --policy-pack policies``."""

    enabled: bool = True
    pack_dir: Path | None = None
    """Default: the project's ``policies/``. Another pack can only be booted as the CLI boots it (``subprocess``)."""
    subprocess: bool = False
    """Boot the pack exactly as the Pulumi CLI does (its own interpreter, gRPC) instead of serving the same rules in
    this process (the default: the same calls and messages without the boot and the round trips; a test holds that
    both give identical findings on every example)."""
    config_file: Path | None = None
    """``--policy-pack-config FILE``."""
    analyzer: Analyzer | None = None
    """A running pack to reuse (tests); default: the pack booted once per process as the CLI boots it."""


def apply_policies(report: Any, spec: Any, options: PolicyOptions) -> None:
    """Run the pack over ``report.resources`` and fill violations, waivers and rule metadata into ``report``."""
    if not options.enabled:
        report.policies_skipped = True
        return
    from preview.policy.analyzer import PACK_DIR, shared_analyzer, shared_in_process_analyzer
    from preview.policy.config import PolicyConfigError
    from stacks.validate.issues import path_of

    own_pack = False
    if options.analyzer is not None:
        analyzer = options.analyzer
    elif options.subprocess or options.pack_dir is not None:
        analyzer = shared_analyzer(options.pack_dir or PACK_DIR)
    else:
        analyzer, own_pack = shared_in_process_analyzer(), True
    pool_paths = {pool.name: path_of("nodePools", i) for i, pool in enumerate(spec.node_pools)}
    try:
        outcome = check_policies(
            analyzer,
            report.stack,
            report.resources,
            pool_paths,
            path_of("cluster"),
            options.config_file,
            own_pack=own_pack,
        )
    except PolicyConfigError as exc:
        report.errors = list(exc.issues)
        return
    report.violations = outcome.violations
    if report.cost is not None:
        report.cost.notes.extend(override_notes(report.cost, report.region, outcome.price_overrides))
    report.waived = outcome.waived
    report.policy_rules = outcome.rules
    report.warnings = list(report.warnings) + outcome.warnings
