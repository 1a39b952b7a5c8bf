"""The "this field must be X" check the security baseline shares (in the spirit of Checkov's
``BaseResourceValueCheck``): a rule names the resource types, the property path, what the value must be and how to
word a miss; the verdict (unknown values, unset fields, not-applicable resources) lives here once.

    CHECKS = (FieldCheck(types=(GKE_NODE_POOL,), path=("management", "autoRepair"), required=Equals(True),
                         problem="auto-repair is off", fix="set management.autoRepair: true"),)
    RULE = Rule(..., applies_to=applies_to(CHECKS), check=field_checks(CHECKS))

The finding reads ``pool 'h100': auto-repair is off · observed: management.autoRepair false · required: true``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from policies.findings import Finding, listing, shown
from policies.gke import node_configs
from policies.pools import pool_subject
from policies.resources import LAUNCH_TEMPLATE, cluster_subject, pool_tag
from policies.rule import Config, Resource
from policies.values import UNKNOWN, as_int, dig

Words = str | Callable[[dict, Config], str]
"""Fixed wording, or wording built from the inspected object (inputs or node config) and the rule's config."""


class Requirement:
    """What the value at the path must be: ``holds`` decides, ``describe`` words it for ``required:``."""

    def holds(self, value: Any, cfg: Config) -> bool:
        raise NotImplementedError

    def describe(self, cfg: Config) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Equals(Requirement):
    value: Any
    meaning: str = ""
    """Said after the value when the value alone reads oddly: ``required (IMDSv2 session tokens only)``."""

    def holds(self, value: Any, cfg: Config) -> bool:
        return type(value) is type(self.value) and value == self.value  # 1 is not True

    def describe(self, cfg: Config) -> str:
        return shown(self.value) + (f" ({self.meaning})" if self.meaning else "")


@dataclass(frozen=True)
class IsSet(Requirement):
    """Any non-empty value (Checkov's ``ANY_VALUE``)."""

    what: str

    def holds(self, value: Any, cfg: Config) -> bool:
        return value not in (None, "", [], {})

    def describe(self, cfg: Config) -> str:
        return self.what


@dataclass(frozen=True)
class AtMost(Requirement):
    """A number no higher than the rule's config knob ``knob``."""

    knob: str

    def holds(self, value: Any, cfg: Config) -> bool:
        number = as_int(value)
        return isinstance(number, int) and number <= int(cfg[self.knob])

    def describe(self, cfg: Config) -> str:
        return f"at most {int(cfg[self.knob])}, from {self.knob}"


@dataclass(frozen=True)
class Includes(Requirement):
    """A list holding every item of ``items``, or of the rule's config knob ``knob``."""

    items: tuple[str, ...] = ()
    knob: str | None = None

    def wanted(self, cfg: Config) -> list[str]:
        return list(cfg[self.knob]) if self.knob else list(self.items)

    def missing(self, value: Any, cfg: Config) -> list[str]:
        have = {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()
        return [i for i in self.wanted(cfg) if i not in have]

    def holds(self, value: Any, cfg: Config) -> bool:
        return not self.missing(value, cfg)

    def describe(self, cfg: Config) -> str:
        wanted = self.wanted(cfg)
        return (f"all of {listing(wanted, 12)}" if len(wanted) > 1 else f"includes {wanted[0]}") + (
            f", from {self.knob}" if self.knob else ""
        )


@dataclass(frozen=True)
class FieldCheck:
    types: tuple[str, ...]
    """Resource types the check reads."""
    path: tuple[str, ...]
    """Property path: under the resource's inputs, or under each node config when ``node_config``."""
    required: Requirement
    problem: Words
    """What is wrong when the requirement fails: ``auto-repair is off``."""
    fix: Words
    unset_complies: bool = False
    """An unset field complies: the provider's default is the required value (``enableShieldedNodes``)."""
    unset_means: str | None = None
    """Shown after ``unset`` when the default is not obvious: ``AL2023 EKS AMIs then answer at 2 hops``."""
    node_config: bool = False
    """Read ``nodeConfig`` of a GKE node pool, and of a cluster when it sets one (as Checkov does)."""
    applies: Callable[[dict], bool] | None = None
    """Not applicable when this returns False on the inspected object (IMDS turned off: no tokens to require)."""


def _words(words: Words, inspected: dict, cfg: Config) -> str:
    return words if isinstance(words, str) else words(inspected, cfg)


def _observed(check: FieldCheck, value: Any) -> str:
    where = ".".join(("nodeConfig",) * check.node_config + check.path)
    if value is None and check.unset_means:
        return f"{where} unset ({check.unset_means})"
    return f"{where} {shown(value)}"


def _subject(r: Resource) -> tuple[str, tuple[str, ...]]:
    """``pool 'p5'``, ``pool 'p5' (launch template 'p5-lt')``, ``cluster 'ml'``, by what the resource is."""
    pool = pool_subject(r)
    if pool is not None:
        return pool
    if r.type == LAUNCH_TEMPLATE:
        tag = pool_tag(r.props)
        if tag:
            return f"pool '{tag}' (launch template '{r.name}')", (tag, r.name, r.urn)
        return f"launch template '{r.name}'", (r.name, r.urn)
    return cluster_subject(r)


def _inspected(check: FieldCheck, r: Resource) -> list[tuple[str, tuple[str, ...], dict]]:
    """(subject, waiver keys, object the path starts at) for each object the check reads on ``r``."""
    if check.node_config:
        return [(nc.subject, nc.keys, nc.config) for nc in node_configs(r)]
    subject, keys = _subject(r)
    return [(subject, keys, r.props)]


def verdict(check: FieldCheck, r: Resource, cfg: Config) -> Iterable[Finding]:
    """Findings of one check on one resource: none when the value complies, is unknown until deploy, is unset
    and the default complies, or the check does not apply."""
    if r.type not in check.types:
        return
    for subject, keys, inspected in _inspected(check, r):
        if check.applies is not None and not check.applies(inspected):
            continue
        value = dig(inspected, *check.path)
        if value is UNKNOWN or (value is None and check.unset_complies) or check.required.holds(value, cfg):
            continue
        yield Finding(
            subject,
            _words(check.problem, inspected, cfg),
            observed=_observed(check, value),
            required=check.required.describe(cfg) + (" (or unset)" if check.unset_complies else ""),
            fix=_words(check.fix, inspected, cfg),
            keys=keys,
        )


def field_checks(checks: tuple[FieldCheck, ...]) -> Callable[[Resource, Config], Iterable[Finding]]:
    """A rule's ``check``: every field check that reads the resource's type."""

    def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
        for one in checks:
            yield from verdict(one, resource, cfg)

    return check


def applies_to(checks: tuple[FieldCheck, ...]) -> tuple[str, ...]:
    """The rule's ``applies_to``: the types its checks read, in order, once each."""
    return tuple(dict.fromkeys(t for c in checks for t in c.types))
