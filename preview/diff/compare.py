"""Diff two versions of a stack, both rendered offline: resources, semantic changes, cost and policy deltas.

Each side runs the same program (the working tree's ``__main__.py``) against its own stack config, through the same
preview as ``python -m preview``; only the config differs. A side may be absent (a new or deleted stack) or invalid
(its errors are shown instead of a diff against it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from preview.diff.cost import CostDiff, diff_cost
from preview.diff.fleet import fleet_delta
from preview.diff.policy import PolicyDiff, diff_violations
from preview.diff.resources import ResourceDiff, diff_resources
from preview.diff.sources import StackConfig
from preview.fleet.stack_files import StackFiles
from preview.diff.spec import EntityDiff, diff_specs
from preview.diff.spec_views import SpecSide
from preview.engine import PROJECT_ROOT
from preview.report import EXIT_INVALID, EXIT_OK, PreviewReport
from stacks.validate.issues import SpecError
from stacks.validate.load import decode_config
from stacks.validate.planned import load_planned
from stacks.validate.secrets import names_in_namespace, secure_keys
from stacks.validate.stack_file import StackFileError
from stacks.spec.stack import StackSpec

EXIT_COST = 3
"""The total $/hour at max grew by more than ``--fail-on-cost-increase`` allows (and nothing worse happened)."""
OK, ABSENT, INVALID = "ok", "absent", "invalid"

Previewer = Callable[..., PreviewReport]
"""``previewer(stack, config, main, stack_files=None)``: one side's preview; ``stack_files``: where a fleet manager's
workers are read on that side (None: next to ``main``)."""


@dataclass
class Side:
    label: str
    state: str
    """``ok``, ``absent`` (no stack file there) or ``invalid`` (the config has errors; nothing was rendered)."""
    report: PreviewReport | None = None
    spec: StackSpec | None = None

    @property
    def resources(self) -> list:
        return self.report.resources if self.report and self.state == OK else []

    @property
    def violations(self) -> list[dict[str, Any]]:
        return self.report.violations if self.report and self.state == OK else []

    def spec_side(self) -> SpecSide:
        if self.state != OK or self.report is None:
            return SpecSide(None)
        return SpecSide(self.spec, self.report.cost, tuple(self.report.gpu_runtime))


def default_previewer(policies: Any = None) -> Previewer:
    """``preview_config`` with the policy pack options of the command line (pack on by default)."""
    from preview.run import preview_config

    def run(stack: str, config: dict[str, Any], main: Path, stack_files: StackFiles | None = None) -> PreviewReport:
        return preview_config(stack, config, main, policies, stack_files=stack_files)

    return run


def build_side(
    stack: str,
    config: StackConfig,
    label: str,
    previewer: Previewer,
    main: Path = PROJECT_ROOT / "__main__.py",
    stack_files: StackFiles | None = None,
) -> Side:
    if config is None:
        return Side(label, ABSENT)
    if isinstance(config, StackFileError):  # no stack file at all: invalid, with where and why
        return Side(label, INVALID, PreviewReport(stack=stack, errors=[config.issue]))
    report = previewer(stack, config, main, stack_files=stack_files)
    if report.errors:
        return Side(label, INVALID, report)
    try:  # the previewer validated this config already: load_planned hands back that spec, not a second validation
        spec = load_planned(
            decode_config(config), secret_keys=names_in_namespace(secure_keys(config)), stack_name=stack
        ).spec
    except SpecError:  # the preview accepted it, so this cannot happen unless the two drift apart
        return Side(label, INVALID, report)
    return Side(label, OK, report, spec)


@dataclass
class StackDiff:
    stack: str
    base: Side
    head: Side
    entities: list[EntityDiff]
    resources: ResourceDiff
    cost: CostDiff
    policy: PolicyDiff

    @property
    def cloud(self) -> str | None:
        return next((s.report.cloud for s in (self.head, self.base) if s.report and s.report.cloud), None)

    @property
    def region(self) -> str | None:
        return next((s.report.region for s in (self.head, self.base) if s.report and s.report.region), None)

    @property
    def exit_code(self) -> int:
        """As the preview of the head: 2 invalid, 1 a mandatory violation, 0 otherwise (a deleted stack is 0)."""
        if self.head.state == INVALID:
            return EXIT_INVALID
        return self.head.report.exit_code if self.head.report else EXIT_OK

    @property
    def fleet(self) -> dict[str, Any] | None:
        """A fleet manager: the fleet's totals (manager and workers) on both sides, the change, and each cluster that
        changed. Each side's workers are previewed from the stack files of its own revision (``preview/diff/fleet.py``)."""
        return fleet_delta(*(s.report.fleet if s.state == OK and s.report else None for s in (self.base, self.head)))

    @property
    def policies_skipped(self) -> bool:
        """``--no-policies``: no rule was checked on either side, so an empty policy delta is not a clean one."""
        return any(s.report is not None and s.report.policies_skipped for s in (self.base, self.head))

    @property
    def has_changes(self) -> bool:
        fleet = self.fleet
        return bool(
            self.entities
            or self.resources.changes
            or self.cost.changed_lines
            or self.policy.new
            or self.policy.resolved
            or self.base.state != self.head.state
            or (fleet and fleet["changed"])
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "stack": self.stack,
            "cloud": self.cloud,
            "region": self.region,
            "exitCode": self.exit_code,
            "base": {
                "label": self.base.label,
                "state": self.base.state,
                "errors": [e.as_dict() for e in (self.base.report.errors if self.base.report else [])],
                "policyPack": self.base.report.policy_pack if self.base.report else None,
            },
            "head": {
                "label": self.head.label,
                "state": self.head.state,
                "errors": [e.as_dict() for e in (self.head.report.errors if self.head.report else [])],
                "policyPack": self.head.report.policy_pack if self.head.report else None,
            },
            "changes": [e.as_dict() for e in self.entities],
            "resources": {
                "add": self.resources.count("add"),
                "remove": self.resources.count("remove"),
                "replace": self.resources.count("replace"),
                "update": self.resources.count("update"),
                "unchanged": self.resources.unchanged,
                "changes": [c.as_dict() for c in self.resources.changes],
            },
            "cost": self.cost.as_dict(),
            "policy": self.policy.as_dict(),
            "fleet": self.fleet,
        }


def diff_sides(stack: str, base: Side, head: Side) -> StackDiff:
    return StackDiff(
        stack=stack,
        base=base,
        head=head,
        entities=diff_specs(base.spec_side(), head.spec_side(), stack),
        resources=diff_resources(base.resources, head.resources),
        cost=diff_cost(
            base.report.cost if base.state == OK and base.report else None,
            head.report.cost if head.state == OK and head.report else None,
        ),
        policy=diff_violations(base.violations, head.violations),
    )


def diff_configs(
    stack: str,
    base_config: StackConfig,
    head_config: StackConfig,
    base_label: str,
    head_label: str = "working tree",
    previewer: Previewer | None = None,
    main: Path = PROJECT_ROOT / "__main__.py",
    base_files: StackFiles | None = None,
    head_files: StackFiles | None = None,
) -> StackDiff:
    """``base_files``/``head_files``: where a fleet manager's worker stack files are read on each side, the same
    revision as its own file (``BaseConfig.stack_files``); None: the working tree next to ``main``."""
    run = previewer or default_previewer()
    return diff_sides(
        stack,
        build_side(stack, base_config, base_label, run, main, base_files),
        build_side(stack, head_config, head_label, run, main, head_files),
    )


@dataclass(frozen=True)
class CostThreshold:
    """``--fail-on-cost-increase``: ``250`` ($/hour at max) or ``10%`` (of the base's $/hour at max)."""

    usd_per_hour: float | None = None
    percent: float | None = None

    @classmethod
    def parse(cls, text: str) -> "CostThreshold":
        match = re.fullmatch(r"\s*\$?([0-9]+(?:\.[0-9]+)?)\s*(%?)\s*", text or "")
        if not match:
            raise ValueError(
                f"--fail-on-cost-increase {text!r}: expected dollars per hour at max (250) or a "
                f"percentage of the base (10%)"
            )
        value = float(match.group(1))
        return cls(percent=value) if match.group(2) else cls(usd_per_hour=value)

    def exceeded_by(self, cost: CostDiff) -> bool:
        delta = cost.delta_max
        if delta <= 0:
            return False
        if self.usd_per_hour is not None:
            return delta > self.usd_per_hour
        if cost.before_max <= 0:
            return True  # any increase from nothing is infinitely many percent
        return delta / cost.before_max * 100 > (self.percent or 0)

    def describe(self) -> str:
        return f"${self.usd_per_hour:,.2f}/h" if self.usd_per_hour is not None else f"{self.percent:g}%"


def exit_code(diff: StackDiff, threshold: CostThreshold | None) -> int:
    code = diff.exit_code
    if code == EXIT_OK and threshold is not None and threshold.exceeded_by(diff.cost):
        return EXIT_COST
    return code
