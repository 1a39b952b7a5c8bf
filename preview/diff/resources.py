"""Resource-level diff of two recordings: added, removed, replaced and updated resources with the input paths that
changed. Resources match by (type, name, parent chain): Pulumi auto-names pools after the resource name, so a
pool keeps its identity exactly as long as its name and place in the tree stay the same."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from preview.engine import Registered
from preview.diff.k8s_replacement import classify_k8s
from preview.diff.replacement import RULES, UPDATE_NOTES, classify, covers

Key = tuple[tuple[str, str], ...]
"""(type, name) of the root-most ancestor first, the resource itself last."""

ADD, REMOVE, REPLACE, UPDATE = "add", "remove", "replace", "update"
ACTION_ORDER = {REPLACE: 0, REMOVE: 1, ADD: 2, UPDATE: 3}
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PROTECT_PATH = "(protect)"
"""Pseudo path for a change of the ``protect`` resource option."""


@dataclass(frozen=True)
class ResourceChange:
    action: str
    type: str
    name: str
    parents: tuple[str, ...]
    """Names of the enclosing components, outermost first (``("h100",)`` for a pool's node pool)."""
    paths: tuple[str, ...] = ()
    """Changed input paths (updates and replacements), ignored ones excluded."""
    replace_reasons: dict[str, str] = field(default_factory=dict)
    """Changed path -> the provider field that forces the replacement."""
    ignored: tuple[str, ...] = ()
    """Changed paths the program lists in ``ignore_changes`` (Pulumi will not act on them)."""
    unassessed: tuple[str, ...] = ()
    """Changed paths the replacement table does not classify (reported as updates)."""
    note: str = ""
    refused: dict[str, str] = field(default_factory=dict)
    """Changed path -> why the API server will refuse this in-place update (a CRD's immutable field)."""

    @property
    def where(self) -> str:
        return " › ".join(self.parents)

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "type": self.type,
            "name": self.name,
            "parents": list(self.parents),
            "changedInputs": list(self.paths),
            "replaceBecause": dict(self.replace_reasons),
            "ignoredChanges": list(self.ignored),
            "replacementNotAssessed": list(self.unassessed),
            "refusedBecause": dict(self.refused),
            "note": self.note,
        }


@dataclass
class ResourceDiff:
    changes: list[ResourceChange]
    unchanged: int

    def count(self, action: str) -> int:
        return sum(1 for c in self.changes if c.action == action)


def resource_key(r: Registered, by_urn: dict[str, Registered]) -> Key:
    chain: list[tuple[str, str]] = [(r.type, r.name)]
    seen = {r.urn}
    parent = by_urn.get(r.parent_urn)
    while parent is not None and parent.urn not in seen:  # the stack itself is never registered: the chain ends
        seen.add(parent.urn)
        chain.append((parent.type, parent.name))
        parent = by_urn.get(parent.parent_urn)
    return tuple(reversed(chain))


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": [1]}}`` -> ``{"a.b[0]": 1}``; empty containers stay leaves so that adding one is a change."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, join_path(prefix, str(k))))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def join_path(prefix: str, key: str) -> str:
    """Pulumi's property path spelling: ``a.b``, and ``labels["gpu-cluster/pool"]`` for keys that need quoting."""
    if IDENTIFIER.match(key):
        return f"{prefix}.{key}" if prefix else key
    return f'{prefix}["{key}"]'


def changed_paths(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    flat_before, flat_after = flatten(before), flatten(after)
    missing = object()
    return sorted(
        p for p in flat_before.keys() | flat_after.keys() if flat_before.get(p, missing) != flat_after.get(p, missing)
    )


def _parents(key: Key) -> tuple[str, ...]:
    return tuple(name for _, name in key[:-1])


def diff_resources(base: Iterable[Registered], head: Iterable[Registered]) -> ResourceDiff:
    base, head = list(base), list(head)
    base_by_urn, head_by_urn = {r.urn: r for r in base}, {r.urn: r for r in head}
    before = {resource_key(r, base_by_urn): r for r in base}
    after = {resource_key(r, head_by_urn): r for r in head}
    changes: list[ResourceChange] = []
    unchanged = 0
    for key, r in after.items():
        old = before.get(key)
        if old is None:
            changes.append(ResourceChange(ADD, r.type, r.name, _parents(key)))
            continue
        change = _compare(key, old, r)
        if change is None:
            unchanged += 1
        else:
            changes.append(change)
    for key, r in before.items():
        if key not in after:
            changes.append(ResourceChange(REMOVE, r.type, r.name, _parents(key)))
    changes.sort(key=lambda c: (ACTION_ORDER[c.action], c.parents, c.type, c.name))
    return ResourceDiff(changes=changes, unchanged=unchanged)


def _compare(key: Key, old: Registered, new: Registered) -> ResourceChange | None:
    paths = changed_paths(old.redacted_inputs, new.redacted_inputs)
    ignore = list(new.ignore_changes)
    ignored = tuple(p for p in paths if any(covers(i, p) for i in ignore))
    acted = [p for p in paths if p not in ignored]
    if old.protect != new.protect:
        acted.append(PROTECT_PATH)
    if not acted:
        return None  # nothing changed, or only what Pulumi is told to ignore
    inputs = [p for p in acted if p != PROTECT_PATH]
    k8s = classify_k8s(new.type, inputs, old.redacted_inputs, new.redacted_inputs) if new.custom else None
    if k8s is not None:
        if k8s.replaces:
            return ResourceChange(
                REPLACE,
                new.type,
                new.name,
                _parents(key),
                tuple(acted),
                k8s.replaces,
                ignored,
                note=_k8s_replace_note(k8s.delete_first),
            )
        note = "the API server refuses this update: see the paths marked refused" if k8s.refused else ""
        return ResourceChange(
            UPDATE, new.type, new.name, _parents(key), tuple(acted), {}, ignored, note=note, refused=k8s.refused
        )
    verdict = classify(new.type, inputs)
    rules = RULES.get(new.type)
    if verdict.replaces:
        return ResourceChange(
            REPLACE,
            new.type,
            new.name,
            _parents(key),
            tuple(acted),
            verdict.replaces,
            ignored,
            verdict.unassessed,
            note=_replace_note(new),
        )
    rolls = rules is not None and any(covers(r, p) for r in rules.rolling for p in acted)
    note = (rules.note if rolls else "") if rules else UPDATE_NOTES.get(new.type, "")
    return ResourceChange(
        UPDATE, new.type, new.name, _parents(key), tuple(acted), {}, ignored, verdict.unassessed, note=note
    )


def _k8s_replace_note(delete_first: bool) -> str:
    if delete_first:
        return "same name: the provider deletes the old object before creating the new one, so it is absent for a while"
    return "the provider creates the new object, repoints what references it, then deletes the old one"


def _replace_note(r: Registered) -> str:
    """Pools are auto-named, so Pulumi creates the replacement before deleting the old one."""
    text = "Pulumi creates the new one before deleting the old one (auto-named), so both exist for a while"
    inputs = r.inputs if isinstance(r.inputs, dict) else {}
    affinity = (inputs.get("nodeConfig") or {}).get("reservationAffinity") or {}
    reserved = affinity.get("consumeReservationType") == "SPECIFIC_RESERVATION"
    if reserved or inputs.get("capacityType") == "CAPACITY_BLOCK":
        text += "; a reservation held by the old nodes is not free for the new ones until they are gone"
    return text
