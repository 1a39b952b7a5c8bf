"""The rule type: metadata (ID, name, severity, enforcement, remediation, docs anchor, config schema) plus a check.

A check returns findings; this module turns them into Pulumi policy violations, applies waivers and fills in
config defaults, so every rule behaves the same under the Pulumi CLI and under the offline preview.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Iterable, Mapping

from pulumi_policy import (
    EnforcementLevel, PolicyConfigSchema, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity,
    StackValidationArgs, StackValidationPolicy,
)

from policies.findings import Finding
from policies.values import plain

DOCS = "policies/RULES.md"
"""The generated rule reference; every rule's URL is an anchor in it."""
ID_PATTERN = re.compile(r"^(cost|topology|cross-layer|security)(-[a-z0-9]+)+$")
CHECKOV_ID = re.compile(r"^CKV2?_(GCP|AWS|K8S)_[0-9]+$")
MIN_WAIVER_REASON = 10


class Category(str, Enum):
    COST = "cost"
    TOPOLOGY = "topology"
    CROSS_LAYER = "cross-layer"
    SECURITY = "security"


@dataclass(frozen=True)
class Resource:
    """What a check sees of one resource: plain inputs (camelCase wire names, numbers as floats)."""

    type: str
    name: str
    urn: str
    props: dict[str, Any]
    provider: dict[str, Any] = field(default_factory=dict)
    """Inputs of the resource's provider (its ``region``, ``project``); empty when the engine did not send them."""
    parent: str | None = None


Config = Mapping[str, Any]


def waiver_schema(rule_id: str) -> dict[str, Any]:
    return {
        "type": "array", "default": [],
        "description": ("Waivers: each names this rule (`rule`), the pool or resource it covers (`resource`: pool "
                        "name, Pulumi resource name or URN) and why (`reason`). A waived finding is not reported."),
        "items": {
            "type": "object", "additionalProperties": False, "required": ["rule", "resource", "reason"],
            "properties": {
                "rule": {"type": "string", "enum": [rule_id], "description": "This rule's ID."},
                "resource": {"type": "string", "minLength": 1},
                "reason": {"type": "string", "minLength": MIN_WAIVER_REASON},
            },
        },
    }


@dataclass(frozen=True)
class Rule:
    id: str
    """Stable ID, also the Pulumi policy name used in --policy-pack-config: ``<category>-<what>``."""
    title: str
    """Human name (the policy's display name)."""
    category: Category
    description: str
    """One sentence: what must hold. The Pulumi CLI prints it above every violation message."""
    why: str
    remediation: str
    severity: Severity
    enforcement: EnforcementLevel
    applies_to: tuple[str, ...]
    """Resource type tokens the rule reads."""
    check: Callable[..., Iterable[Finding]]
    stack: bool = False
    """True: a stack rule (sees every resource at once, for rules that join resources)."""
    config: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    """Tunables as JSON-schema properties, each with a ``default`` and a ``description``."""
    checkov: str | None = None
    """The Checkov check this rule re-implements, when one maps."""

    @property
    def url(self) -> str:
        return f"{DOCS}#{self.id}"

    def schema_properties(self) -> dict[str, dict[str, Any]]:
        return {**self.config, "waivers": waiver_schema(self.id)}

    def defaults(self) -> dict[str, Any]:
        return {k: v["default"] for k, v in self.schema_properties().items() if "default" in v}

    def settings(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        """Schema defaults under the given config: the CLI fills defaults in, but a bare SDK call does not."""
        return {**self.defaults(), **plain(dict(given or {}))}

    # -- evaluation ------------------------------------------------------------------------------------------
    def evaluate(self, subject: Resource | list[Resource], config: Mapping[str, Any] | None = None,
                 ) -> tuple[list[Finding], list[tuple[Finding, dict]]]:
        """Findings left after waivers, and the waived ones with their waiver."""
        cfg = self.settings(config)
        if not self.stack and subject.type not in self.applies_to:  # type: ignore[union-attr]
            return [], []
        found = list(self.check(subject, cfg))
        waivers = [w for w in cfg.get("waivers", []) if w.get("rule", self.id) == self.id]
        open_, waived = [], []
        for finding in found:
            hit = next((w for w in waivers if w.get("resource") in finding.keys), None)
            if hit is None:
                open_.append(finding)
            else:
                waived.append((finding, hit))
        return open_, waived

    def policy(self) -> ResourceValidationPolicy | StackValidationPolicy:
        kwargs: dict[str, Any] = dict(name=self.id, description=self.description, enforcement_level=self.enforcement,
                      config_schema=PolicyConfigSchema(properties=self.schema_properties()),
                      display_name=self.title, severity=self.severity, remediation_steps=self.remediation,
                      url=self.url, tags=[self.category.value] + ([self.checkov] if self.checkov else []))
        if self.stack:
            return StackValidationPolicy(validate=self._validate_stack, **kwargs)
        return ResourceValidationPolicy(validate=self._validate_resource, **kwargs)

    def _validate_resource(self, args: ResourceValidationArgs, report: ReportViolation) -> None:
        if args.resource_type not in self.applies_to:
            return
        provider = plain(args.provider.props) if args.provider is not None else {}
        resource = Resource(args.resource_type, args.name, args.urn, plain(args.props), provider or {},
                            args.opts.parent if args.opts is not None else None)
        open_, waived = self.evaluate(resource, args.get_config())
        for finding in open_:
            report(finding.message, None)
        if waived and not open_:
            args.not_applicable(waiver_note(waived))

    def _validate_stack(self, args: StackValidationArgs, report: ReportViolation) -> None:
        resources = [Resource(r.resource_type, r.name, r.urn, plain(r.props),
                              plain(r.provider.props) if r.provider is not None else {},
                              r.parent.urn if r.parent is not None else None) for r in args.resources]
        open_, waived = self.evaluate(resources, args.get_config())
        for finding in open_:
            report(finding.message, finding.urn)
        if waived and not open_:
            args.not_applicable(waiver_note(waived))


WAIVED_PREFIX = "waived: "


def waiver_note(waived: list[tuple[Finding, dict]]) -> str:
    """``waived: pool 'a' (reason); pool 'b' (reason)``: the offline preview lists these as applied waivers."""
    items = dict.fromkeys(f"{f.subject} ({w['reason']})" for f, w in waived)  # one entry per subject and reason
    return WAIVED_PREFIX + "; ".join(items)
