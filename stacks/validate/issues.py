"""Spec problems as data (config path, value received, what is allowed, the fix) and ``Issues``, the one collector
every validation check reports through."""

from __future__ import annotations

import difflib
import json
import math
import unicodedata
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable

NAMESPACE = "gpu-cluster"
MAX_ALLOWED_SHOWN = 12
MAX_SHOWN_CHARS = 80
"""A value longer than this is shortened in messages (a 10,000-character machine type made a 10,456-character
error)."""
MAX_SHOWN_STRUCTURE = 240
"""The same for a list or mapping, which the user reads item by item (networks, subnets)."""
ALIASES = {
    "gke": "gcp",
    "google": "gcp",
    "eks": "aws",
    "amazon": "aws",
    "preemptible": "spot",
    "ondemand": "on-demand",
    "reserved": "reservation",
}
"""Words users write for an allowed value (the product or an older name); offered as 'did you mean'."""


class _Null:
    """The value of a key the user left empty (``maxNodes:`` or ``maxNodes: null``): shown as ``received: null``,
    whereas ``None`` means the issue has no value to show."""

    def __repr__(self) -> str:
        return "null"


NULL: Any = _Null()


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
        if self.shown_value is not None:
            lines.append(f"  received: {self.shown_value}")
        if self.allowed:
            lines.append(f"  allowed:  {self.allowed}")
        if self.fix:
            lines.append(f"  fix:      {self.fix}")
        return "\n".join(lines)

    @property
    def shown_value(self) -> str | None:
        """The value received as messages show it (strings quoted, long values shortened), or None."""
        return None if self.value is None else _show(self.value)

    def as_dict(self) -> dict[str, Any]:
        value = None if self.value is NULL else self.value
        if isinstance(value, float) and not math.isfinite(value):
            value = _show(value)  # strict JSON has no NaN
        if value is not None and _show(value) != _display(value):
            value = _show(value)  # shortened, like every message
        return {
            "path": self.path,
            "problem": self.problem,
            "value": value,
            "allowed": self.allowed,
            "fix": self.fix,
            "severity": "warning" if self.warning else "error",
        }


class SpecError(Exception):
    """Raised once with every error found; warnings ride along for display."""

    def __init__(self, issues: list[SpecIssue]):
        self.issues = issues
        self.errors = [i for i in issues if not i.warning]
        super().__init__(format_issues(self.errors))


def _show(value: Any) -> str:
    """``value`` as messages show it: what the user wrote, shortened when long."""
    text = _display(value)
    return shorten(text, MAX_SHOWN_CHARS if isinstance(value, str) else MAX_SHOWN_STRUCTURE)


def _display(value: Any) -> str:
    if value is NULL:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"  # as YAML writes them
    if isinstance(value, Enum):
        value = value.value  # show what the user wrote ('RAPID'), not <ReleaseChannel.RAPID: 'RAPID'>
    if isinstance(value, str):
        return repr(value)
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)


def shorten(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}… ({len(text):,} characters)"


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


INVISIBLE = frozenset("\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff")
"""Zero-width space, direction marks and overrides, byte-order mark: they change how text reads without showing."""


def is_control(ch: str) -> bool:
    """A character no config string may hold: C0/C1 controls, line and paragraph separators, ``INVISIBLE``."""
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in INVISIBLE


def printable(text: str) -> str:
    """``text`` with each control character escaped (``l4\\n``), so a value can never break a message's lines."""
    if not any(is_control(ch) for ch in text):
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii") if is_control(ch) else ch for ch in text)


def sort_key(issue: SpecIssue) -> tuple:
    """Order issues as the config reads: by path, list indexes numerically."""
    import re

    # ASCII digits only: str.isdigit() is also true for '²', which int() rejects (a key like 'nodePools²' crashed).
    return tuple(
        (0, int(t)) if t[0] in "0123456789" else (1, t) for t in re.findall(r"[0-9]+|[^\[\].0-9]+", issue.path)
    )


Key = str | int
"""One step of a config path: a key (``"nodePools"``) or a list index (``0``)."""
Field = Key | tuple[Key, ...] | None
"""Where below a scope an issue sits: one step, several, or ``None`` for the scope itself."""


class Issues:
    """The one way validation reports a problem: a scope at a config path that collects into a shared list.

    ``issues.at("nodePools", 0)`` is a nested scope; ``issues.pool(0, "h100")`` is the same scope naming the pool, so
    every problem reported through it reads ``pool 'h100': …``. ``error``/``warn`` add an issue below the scope;
    ``found`` hands back every issue collected through any scope of the same root.
    """

    def __init__(self, parts: tuple[Key, ...] = (), subject: str | None = None, sink: list[SpecIssue] | None = None):
        self._parts = parts
        self._subject = subject
        self._sink: list[SpecIssue] = [] if sink is None else sink

    def at(self, *parts: Key) -> Issues:
        """A scope further down the config; it keeps this scope's subject (a pool stays named below it)."""
        return Issues((*self._parts, *parts), self._subject, self._sink)

    def about(self, subject: str) -> Issues:
        """The same path, with every problem opening ``<subject>: `` (e.g. ``pool 'h100'``)."""
        return Issues(self._parts, subject, self._sink)

    def pool(self, index: int, name: str) -> Issues:
        """The scope of ``nodePools[index]`` (from any scope: pools are top-level), naming the pool as written."""
        return Issues(("nodePools", index), pool_subject(name), self._sink)

    def error(
        self, field: Field, problem: str, value: Any = None, *, allowed: str | None = None, fix: str | None = None
    ) -> None:
        self._add(field, problem, value, allowed, fix, warning=False)

    def warn(
        self, field: Field, problem: str, value: Any = None, *, allowed: str | None = None, fix: str | None = None
    ) -> None:
        self._add(field, problem, value, allowed, fix, warning=True)

    def extend(self, issues: Iterable[SpecIssue]) -> None:
        """Adopt issues another collector found (e.g. after filtering them)."""
        self._sink.extend(issues)

    @property
    def path(self) -> str:
        return path_of(*self._parts)

    @property
    def found(self) -> list[SpecIssue]:
        """Every issue collected so far through this root, in the order reported (a copy)."""
        return list(self._sink)

    def __len__(self) -> int:
        return len(self._sink)

    def _add(self, field: Field, problem: str, value: Any, allowed: str | None, fix: str | None, warning: bool) -> None:
        steps: tuple[Key, ...] = () if field is None else field if isinstance(field, tuple) else (field,)
        text = f"{self._subject}: {problem}" if self._subject else problem
        if isinstance(value, str) and len(value) > MAX_SHOWN_CHARS:  # a long value quoted in the text, too
            short = shorten(value)
            text = text.replace(value, short)
            allowed = allowed.replace(value, short) if allowed else allowed
            fix = fix.replace(value, short) if fix else fix
        path = path_of(*self._parts, *(shorten(printable(s)) if isinstance(s, str) else s for s in steps))
        self._sink.append(SpecIssue(path, printable(text), value, allowed, fix and printable(fix), warning))


def pool_subject(name: str) -> str:
    """How every message about a pool names it: ``pool 'h100'`` (policy findings read the same)."""
    return f"pool '{name}'"
