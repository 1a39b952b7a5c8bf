"""The rule type: metadata (ID, name, severity, enforcement, remediation, docs anchor, config schema, the Checkov
check it re-implements, former IDs) plus a check.

A check returns findings; this module turns them into Pulumi policy violations, applies waivers and fills in
config defaults, so every rule behaves the same under the Pulumi CLI and under the offline preview. Rules that read
the catalog get the one the pack loaded when it assembled (``policy(cat)``), never load their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from enum import Enum
from typing import Any, Callable, Iterable, Mapping

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from catalog import Catalog
from policies.findings import Finding
from policies.stack_cache import converted
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


def waiver_schema(rule_id: str, former_ids: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``waivers`` knob. ``rule`` accepts the rule's ID and, after it, its former IDs (deprecated): the
    preview reads them from this enum to map old pack config onto the rule with a warning."""
    return {
        "type": "array",
        "default": [],
        "description": (
            "Waivers: each names this rule (`rule`), the pool or resource it covers (`resource`: pool "
            "name, Pulumi resource name or URN) and why (`reason`). A waived finding is not reported."
        ),
        "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["rule", "resource", "reason"],
            "properties": {
                "rule": {
                    "type": "string",
                    "enum": [rule_id, *former_ids],
                    "description": "This rule's ID"
                    + (f" (deprecated, still accepted: {', '.join(former_ids)})" if former_ids else "")
                    + ".",
                },
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
    """``check(resource, cfg)`` (a stack rule: ``check(resources, cfg)``); with ``reads_catalog``, ``cat`` too."""
    stack: bool = False
    """True: a stack rule (sees every resource at once, for rules that join resources)."""
    config: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    """Tunables as JSON-schema properties, each with a ``default`` and a ``description``."""
    checkov: str | None = None
    """The Checkov check this rule re-implements, when one maps (metadata: RULES.md, tags, SARIF properties)."""
    former_ids: tuple[str, ...] = ()
    """IDs this rule had before (they embedded the Checkov ID). Waivers and pack config naming them still work; the
    offline preview warns and names the current ID."""
    reads_catalog: bool = False
    """True: the check takes the catalog as ``cat`` (machine facts, prices), handed over by the pack."""

    @property
    def url(self) -> str:
        return f"{DOCS}#{self.id}"

    def schema_properties(self) -> dict[str, dict[str, Any]]:
        return {**self.config, "waivers": waiver_schema(self.id, self.former_ids)}

    def defaults(self) -> dict[str, Any]:
        return {k: v["default"] for k, v in self.schema_properties().items() if "default" in v}

    def settings(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        """Schema defaults under the given config: the CLI fills defaults in, but a bare SDK call does not."""
        return {**self.defaults(), **plain(dict(given or {}))}

    # -- evaluation ------------------------------------------------------------------------------------------
    def names(self) -> tuple[str, ...]:
        """The ID and the former IDs: what a waiver may call this rule."""
        return (self.id, *self.former_ids)

    def evaluate(
        self, subject: Resource | list[Resource], config: Mapping[str, Any] | None = None, cat: Catalog | None = None
    ) -> tuple[list[Finding], list[tuple[Finding, dict]]]:
        """Findings left after waivers, and the waived ones with their waiver."""
        cfg = self.settings(config)
        if not self.stack and subject.type not in self.applies_to:  # type: ignore[union-attr]
            return [], []
        if self.reads_catalog:
            if cat is None:
                raise ValueError(f"{self.id} reads the catalog: pass the one the pack loaded")
            found = list(self.check(subject, cfg, cat))
        else:
            found = list(self.check(subject, cfg))
        if self.stack:  # resources arrive in registration order, which varies run to run (the SDK registers from
            found.sort(key=lambda f: (f.subject, f.message))  # a thread pool): reviewers and tests get one order
        waivers = [w for w in cfg.get("waivers", []) if w.get("rule", self.id) in self.names()]
        open_, waived = [], []
        for finding in found:
            hit = next((w for w in waivers if w.get("resource") in finding.keys), None)
            if hit is None:
                open_.append(finding)
            else:
                waived.append((finding, hit))
        return open_, waived

    def policy(self, cat: Catalog | None = None) -> ResourceValidationPolicy | StackValidationPolicy:
        """The Pulumi policy; ``cat`` is the catalog the pack loaded (required when the rule reads it)."""
        kwargs: dict[str, Any] = dict(
            name=self.id,
            description=self.description,
            enforcement_level=self.enforcement,
            config_schema=PolicyConfigSchema(properties=self.schema_properties()),
            display_name=self.title,
            severity=self.severity,
            remediation_steps=self.remediation,
            url=self.url,
            tags=[self.category.value] + ([self.checkov] if self.checkov else []),
        )
        if self.reads_catalog and cat is None:
            raise ValueError(f"{self.id} reads the catalog: pass the one the pack loaded")
        if self.stack:
            return StackValidationPolicy(validate=partial(self._validate_stack, cat), **kwargs)
        return ResourceValidationPolicy(validate=partial(self._validate_resource, cat), **kwargs)

    def _validate_resource(self, cat: Catalog | None, args: ResourceValidationArgs, report: ReportViolation) -> None:
        if args.resource_type not in self.applies_to:
            return
        props, provider = converted(args.urn, partial(_plain_props, args))  # once for all of the type's rules
        resource = Resource(
            args.resource_type,
            args.name,
            args.urn,
            props,
            provider or {},
            args.opts.parent if args.opts is not None else None,
        )
        open_, waived = self.evaluate(resource, args.get_config(), cat)
        for finding in open_:
            report(finding.message, None)
        if waived and not open_:
            args.not_applicable(waiver_note(waived))

    def _validate_stack(self, cat: Catalog | None, args: StackValidationArgs, report: ReportViolation) -> None:
        resources = list(converted(_STACK_KEY + str(id(args.resources)), partial(_stack_resources, args.resources)))
        open_, waived = self.evaluate(resources, args.get_config(), cat)
        for finding in open_:
            report(finding.message, finding.urn)
        if waived and not open_:
            args.not_applicable(waiver_note(waived))


def _plain_props(r: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A resource's props and its provider's, as plain data."""
    return plain(r.props), (plain(r.provider.props) if r.provider is not None else {})


_STACK_KEY = "stack-resources:"
"""Key prefix of a whole stack's resources in ``converted`` (never a URN, which starts with ``urn:``)."""


def _stack_resources(resources: Any) -> tuple[Resource, ...]:
    """What a stack rule sees of the stack: every resource, plain (each converted once per URN)."""
    out = []
    for r in resources:
        props, provider = converted(r.urn, partial(_plain_props, r))
        out.append(
            Resource(r.resource_type, r.name, r.urn, props, provider, r.parent.urn if r.parent is not None else None)
        )
    return tuple(out)


WAIVED_PREFIX = "waived: "


def waiver_note(waived: list[tuple[Finding, dict]]) -> str:
    """``waived: pool 'a' (reason); pool 'b' (reason)``: the offline preview lists these as applied waivers."""
    items = dict.fromkeys(f"{f.subject} ({w['reason']})" for f, w in waived)  # one entry per subject and reason
    return WAIVED_PREFIX + "; ".join(items)
