"""Spec problems as data: every problem carries its config path, the value received, what is allowed and the fix."""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable

NAMESPACE = "gpu-cluster"
MAX_ALLOWED_SHOWN = 12
ALIASES = {"gke": "gcp", "google": "gcp", "eks": "aws", "amazon": "aws", "preemptible": "spot",
           "ondemand": "on-demand", "reserved": "reservation"}
"""Words users write for an allowed value (the product or an older name); offered as 'did you mean'."""


@dataclass(frozen=True)
class SpecIssue:
    path: str
    """Config path as the user writes it, e.g. ``gpu-cluster:nodePools[1].machineType``."""
    problem: str
    value: Any = None
    allowed: str | None = None
    fix: str | None = None
    warning: bool = False

    def __str__(self) -> str:
        kind = "warning" if self.warning else "error"
        lines = [f"{kind}: {self.path}: {self.problem}"]
        if self.value is not None:
            lines.append(f"  received: {_show(self.value)}")
        if self.allowed:
            lines.append(f"  allowed:  {self.allowed}")
        if self.fix:
            lines.append(f"  fix:      {self.fix}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "problem": self.problem, "value": self.value, "allowed": self.allowed,
                "fix": self.fix, "severity": "warning" if self.warning else "error"}


class SpecError(Exception):
    """Raised once with every error found; warnings ride along for display."""

    def __init__(self, issues: list[SpecIssue]):
        self.issues = issues
        self.errors = [i for i in issues if not i.warning]
        super().__init__(format_issues(self.errors))


def _show(value: Any) -> str:
    if isinstance(value, Enum):
        value = value.value  # show what the user wrote ('RAPID'), not <ReleaseChannel.RAPID: 'RAPID'>
    if isinstance(value, str):
        return repr(value)
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def format_issues(issues: Iterable[SpecIssue]) -> str:
    issues = list(issues)
    errors = sum(1 for i in issues if not i.warning)
    head = f"{errors} configuration error{'s' if errors != 1 else ''} in the stack config"
    return "\n".join([head + ":", *(str(i) for i in issues)])


def path_of(*parts: str | int) -> str:
    """``path_of("nodePools", 1, "machineType")`` -> ``gpu-cluster:nodePools[1].machineType``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return f"{NAMESPACE}:{out}"


def allowed_list(values: Iterable[str]) -> str:
    values = list(values)
    if len(values) <= MAX_ALLOWED_SHOWN:
        return ", ".join(values)
    return ", ".join(values[:MAX_ALLOWED_SHOWN]) + f", … ({len(values)} in all)"


def did_you_mean(value: Any, choices: Iterable[str]) -> str | None:
    if not isinstance(value, str):
        return None
    choices = list(choices)
    alias = ALIASES.get(value.lower())
    if alias in choices:
        return alias
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in choices}
        hit = lowered.get(value.lower().replace("_", "-"))
        close = [hit] if hit else []
    return close[0] if close else None


def choice_fix(field: str, value: Any, choices: Iterable[str], extra: str = "") -> str:
    choices = list(choices)
    hint = did_you_mean(value, choices)
    if hint:
        return f"did you mean {hint!r}?"
    return f"set {field} to one of the allowed values{extra}"


def sort_key(issue: SpecIssue) -> tuple:
    """Order issues as the config reads: by path, list indexes numerically."""
    import re
    # ASCII digits only: str.isdigit() is also true for '²', which int() rejects (a key like 'nodePools²' crashed).
    return tuple((0, int(t)) if t[0] in "0123456789" else (1, t)
                 for t in re.findall(r"[0-9]+|[^\[\].0-9]+", issue.path))
