"""A finding: the verdict of one rule on one subject, with its wording kept apart as structured fields.

Every violation reads the same way, as config errors do: what is wrong, what was observed, what is required, then
the fix on its own line (the renderers show the first line as the violation and the second as its fix)::

    Finding("pool 'h100'", "auto-repair is off", observed="management.autoRepair false", required="true",
            fix="set management.autoRepair: true (gpu-cluster sets it)", keys=view.keys)

    pool 'h100': auto-repair is off · observed: management.autoRepair false · required: true
    Fix: set management.autoRepair: true (gpu-cluster sets it)
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, Iterable

SEPARATOR = " · "
FIX_PREFIX = "Fix: "


@dataclass(frozen=True)
class Finding:
    subject: str
    """Who is affected, by the name the user wrote: ``pool 'h100-mega'``, ``cluster 'gpu-dev'``, ``stack``."""
    problem: str
    """What is wrong and what it causes, in words: ``the price per GPU-hour is over the limit``."""
    _: KW_ONLY  # the rest by name: a call written for an older shape fails loudly instead of misplacing text
    observed: str
    """What the rule saw, naming the setting: ``management.autoRepair false``, ``$11.06 per GPU-hour``."""
    required: str
    """The limit or the allowed values: ``true``, ``at most $10.00 per GPU-hour for H100_80GB, from …``."""
    fix: str
    """What to change, naming the setting."""
    keys: tuple[str, ...] = ()
    """Names a waiver may use for this subject: pool name, Pulumi resource name, URN."""
    urn: str | None = None
    """Stack rules: the resource the finding belongs to (resource rules are attached by the engine)."""

    @property
    def message(self) -> str:
        """Two lines: what is wrong, observed and required (labelled), then the fix."""
        first = SEPARATOR.join(
            [f"{self.subject}: {self.problem}", f"observed: {self.observed}", f"required: {self.required}"]
        )
        return f"{first}\n{FIX_PREFIX}{self.fix}"


def shown(value: Any) -> str:
    """A config value as the user writes it in YAML: ``true``, ``2``, ``GKE_METADATA``, ``unset``."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # wire numbers are floats
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    return str(value)


def money(usd: float) -> str:
    return f"${usd:,.2f}"


def distinct_money(price: float, limit: float) -> tuple[str, str]:
    """``price`` and ``limit`` with as many cents' decimals as it takes to tell them apart (2 to 6): a price just over
    its limit never reads "$1.00 ... at most $1.00"."""
    for places in range(2, 7):
        shown = f"${price:,.{places}f}", f"${limit:,.{places}f}"
        if shown[0] != shown[1]:
            return shown
    return shown


def listing(items: Iterable[object], limit: int = 6) -> str:
    texts = [str(i) for i in items]
    if len(texts) <= limit:
        return ", ".join(texts)
    return ", ".join(texts[:limit]) + f", … ({len(texts)} in all)"
