"""Policy delta: which violations a change introduces, which it resolves, and which stay.

A violation is matched by policy + subject (the pool, else the resource, else the stack) + message. A violation of the
same policy on the same subject whose message changed (the observed value moved: "$12,153/h over budget" became
"$11,000/h") is still the same problem: it counts as unchanged, shown with its new wording.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

MANDATORY = "mandatory"


def subject(v: dict[str, Any]) -> str:
    """Who the violation is about, by the name the user wrote: ``pool h100``, ``resource ml``, ``stack``."""
    if v.get("pool"):
        return f"pool {v['pool']}"
    if v.get("resource"):
        return f"resource {v['resource']}"
    return v.get("group") or "stack"


def _key(v: dict[str, Any]) -> tuple[str, str]:
    return (str(v.get("policy", "")), subject(v))


@dataclass
class PolicyDiff:
    new: list[dict[str, Any]] = field(default_factory=list)
    resolved: list[dict[str, Any]] = field(default_factory=list)
    unchanged: list[dict[str, Any]] = field(default_factory=list)
    reworded: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    """(before, after) of unchanged violations whose message changed; ``after`` is also in ``unchanged``."""

    @property
    def new_mandatory(self) -> list[dict[str, Any]]:
        return [v for v in self.new if v.get("enforcement") == MANDATORY]

    def as_dict(self) -> dict[str, Any]:
        return {
            "new": self.new,
            "resolved": self.resolved,
            "unchanged": self.unchanged,
            "reworded": [
                {"before": b["message"], "after": a["message"], "policy": a.get("policy"), "subject": subject(a)}
                for b, a in self.reworded
            ],
        }


def diff_violations(before: Iterable[dict[str, Any]], after: Iterable[dict[str, Any]]) -> PolicyDiff:
    before, after = list(before), list(after)
    out = PolicyDiff()
    exact = [(_key(v), v.get("message", "")) for v in before]
    unmatched_before = list(before)
    leftovers: list[dict[str, Any]] = []
    for v in after:
        ident = (_key(v), v.get("message", ""))
        if ident in exact:
            i = exact.index(ident)
            exact.pop(i)
            unmatched_before.pop(i)
            out.unchanged.append(v)
        else:
            leftovers.append(v)
    for v in leftovers:  # same policy and subject, different wording: the same problem, its numbers moved
        moved = next((i for i, b in enumerate(unmatched_before) if _key(b) == _key(v)), None)
        if moved is None:
            out.new.append(v)
        else:
            out.reworded.append((unmatched_before.pop(moved), v))
            out.unchanged.append(v)
    out.resolved = unmatched_before
    return out
