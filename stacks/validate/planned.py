"""Validate and plan a stack's config once per process: the offline preview runs the program in-process, and both
(and a diff's two sides, and the what-if) ask for the same config, so the second ask gets the first answer instead
of validating and planning again. Errors are not kept: an invalid config raises ``SpecError`` every time."""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable

from catalog import Catalog, load_catalog
from stacks.plan.stack import StackPlan, plan_stack
from stacks.spec.stack import StackSpec
from stacks.validate.issues import SpecIssue
from stacks.validate.load import load_spec

MAX_KEPT = 8
"""Configs kept (a diff holds two, tests run many stacks in one process)."""


@dataclass(frozen=True)
class Planned:
    spec: StackSpec
    warnings: tuple[SpecIssue, ...]
    plan: StackPlan
    catalog: Catalog


_KEPT: "OrderedDict[str, Planned]" = OrderedDict()


def _key(raw: dict[str, Any], cat: Catalog, secret_keys: frozenset[str], stack_name: str | None) -> str:
    text = json.dumps(raw, sort_keys=True, separators=(",", ":"), default=repr)
    return f"{id(cat)}|{sorted(secret_keys)}|{stack_name}|{text}"


def load_planned(
    raw: dict[str, Any], catalog: Catalog | None = None, secret_keys: Iterable[str] = (), stack_name: str | None = None
) -> Planned:
    """The validated spec, its warnings and its plan; raises ``SpecError`` (every problem) when invalid.
    ``stack_name``: as for ``load_spec`` (a fleet manager cannot list itself); part of what is kept per config."""
    cat = catalog or load_catalog()
    secret = frozenset(secret_keys)
    key = _key(raw, cat, secret, stack_name)
    found = _KEPT.get(key)
    if found is not None and found.catalog is cat:
        _KEPT.move_to_end(key)
        return found
    spec, warnings = load_spec(raw, cat, secret_keys=secret, stack_name=stack_name)
    planned = Planned(spec=spec, warnings=tuple(warnings), plan=plan_stack(spec, cat), catalog=cat)
    _KEPT[key] = planned
    while len(_KEPT) > MAX_KEPT:
        _KEPT.popitem(last=False)
    return planned


def forget() -> None:
    """Drop every kept answer (tests that count planning calls start from nothing)."""
    _KEPT.clear()
