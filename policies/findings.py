"""A finding: the verdict of one rule on one subject, with its wording kept apart as structured fields."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    subject: str
    """Who is affected, by the name the user wrote: ``pool 'h100-mega'``, ``cluster 'gpu-dev'``, ``stack``."""
    problem: str
    """What is wrong, with the observed value: ``$11.06 per GPU-hour is over the limit``."""
    expected: str
    """The limit or the allowed values: ``limit $10.00 for H100_80GB``."""
    fix: str
    """What to change, naming the setting."""
    keys: tuple[str, ...] = ()
    """Names a waiver may use for this subject: pool name, Pulumi resource name, URN."""
    urn: str | None = None
    """Stack rules: the resource the finding belongs to (resource rules are attached by the engine)."""

    @property
    def message(self) -> str:
        """Two lines: what is wrong with the observed value and the limit, then the fix."""
        return f"{self.subject}: {self.problem} ({self.expected}).\nFix: {self.fix}"


def money(usd: float) -> str:
    return f"${usd:,.2f}"


def listing(items, limit: int = 6) -> str:
    items = [str(i) for i in items]
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", … ({len(items)} in all)"
