"""Cost delta between two cost reports: per pool and fixed item, and in total, at min and at max nodes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from preview.cost import HOURS_PER_MONTH, CostReport

EPSILON_USD = 0.005
"""Deltas smaller than half a cent per hour are rounding noise, not a change."""


@dataclass(frozen=True)
class CostLine:
    item: str
    kind: str
    """``pool`` or ``fixed`` (control plane, system pool)."""
    before_min: float
    before_max: float
    after_min: float
    after_max: float
    detail: str = ""
    """What the item is now (``0-8 × a3-highgpu-8g``), or was when it is gone."""
    before_gpus: int = 0
    after_gpus: int = 0
    """GPUs at max nodes."""
    unknown: bool = False
    """The pool's cost is unknown on a side where it exists (a reservation-bound A4X pool, a capacity block without
    its fee): its $ figures are left out of the totals, never counted as $0, and shown as ``unknown``."""

    @property
    def delta_min(self) -> float:
        return self.after_min - self.before_min

    @property
    def delta_max(self) -> float:
        return self.after_max - self.before_max

    @property
    def changed(self) -> bool:
        return (
            abs(self.delta_min) >= EPSILON_USD
            or abs(self.delta_max) >= EPSILON_USD
            or self.before_gpus != self.after_gpus
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "kind": self.kind,
            "detail": self.detail,
            "usdPerHourMin": {
                "before": round(self.before_min, 4),
                "after": round(self.after_min, 4),
                "delta": round(self.delta_min, 4),
            },
            "usdPerHourMax": {
                "before": round(self.before_max, 4),
                "after": round(self.after_max, 4),
                "delta": round(self.delta_max, 4),
            },
            "usdPerMonthMin": {"delta": round(self.delta_min * HOURS_PER_MONTH, 2)},
            "usdPerMonthMax": {"delta": round(self.delta_max * HOURS_PER_MONTH, 2)},
            "maxGpus": {"before": self.before_gpus, "after": self.after_gpus},
            "unknown": self.unknown,
        }


@dataclass
class CostDiff:
    lines: list[CostLine]
    notes: list[str]
    conventions: list[str] = field(default_factory=list)
    """How the figures are counted (the 730-hour month, AWS spot, …): said once per stack, naming the pools."""

    @property
    def before_min(self) -> float:
        return sum(line.before_min for line in self.lines)

    @property
    def before_max(self) -> float:
        return sum(line.before_max for line in self.lines)

    @property
    def after_min(self) -> float:
        return sum(line.after_min for line in self.lines)

    @property
    def after_max(self) -> float:
        return sum(line.after_max for line in self.lines)

    @property
    def delta_min(self) -> float:
        return self.after_min - self.before_min

    @property
    def delta_max(self) -> float:
        return self.after_max - self.before_max

    @property
    def before_gpus(self) -> int:
        return sum(line.before_gpus for line in self.lines)

    @property
    def after_gpus(self) -> int:
        return sum(line.after_gpus for line in self.lines)

    @property
    def unknown(self) -> list[str]:
        """Pools whose cost is unknown on either side (the totals leave them out)."""
        return [line.item for line in self.lines if line.unknown]

    @property
    def changed_lines(self) -> list[CostLine]:
        return [line for line in self.lines if line.changed]

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": [line.as_dict() for line in self.lines],
            "totals": {
                "usdPerHourMin": {
                    "before": round(self.before_min, 4),
                    "after": round(self.after_min, 4),
                    "delta": round(self.delta_min, 4),
                },
                "usdPerHourMax": {
                    "before": round(self.before_max, 4),
                    "after": round(self.after_max, 4),
                    "delta": round(self.delta_max, 4),
                },
                "usdPerMonthMin": {
                    "before": round(self.before_min * HOURS_PER_MONTH, 2),
                    "after": round(self.after_min * HOURS_PER_MONTH, 2),
                    "delta": round(self.delta_min * HOURS_PER_MONTH, 2),
                },
                "usdPerMonthMax": {
                    "before": round(self.before_max * HOURS_PER_MONTH, 2),
                    "after": round(self.after_max * HOURS_PER_MONTH, 2),
                    "delta": round(self.delta_max * HOURS_PER_MONTH, 2),
                },
                "maxGpus": {"before": self.before_gpus, "after": self.after_gpus},
                "unpricedPools": self.unknown,
            },
            "notes": self.notes,
            "conventions": self.conventions,
        }


def _fixed_key(item: str) -> str:
    """``system pool (1-3 × e2-standard-4)`` -> ``system pool``: the details may change, the item stays."""
    return item.split(" (")[0]


def diff_cost(before: CostReport | None, after: CostReport | None) -> CostDiff:
    pools_b = {p.pool: p for p in (before.pools if before else [])}
    pools_a = {p.pool: p for p in (after.pools if after else [])}
    lines: list[CostLine] = []
    for name in list(pools_b) + [n for n in pools_a if n not in pools_b]:
        b, a = pools_b.get(name), pools_a.get(name)
        now = a or b
        assert now is not None  # the name comes from one of the two reports
        lines.append(
            CostLine(
                item=name,
                kind="pool",
                before_min=(b.usd_per_hour_min or 0.0) if b else 0.0,
                before_max=(b.usd_per_hour_max or 0.0) if b else 0.0,
                after_min=(a.usd_per_hour_min or 0.0) if a else 0.0,
                after_max=(a.usd_per_hour_max or 0.0) if a else 0.0,
                detail=f"{now.min_nodes}-{now.max_nodes} × {now.machine_type} ({now.capacity})",
                before_gpus=b.gpus_per_node * b.max_nodes if b else 0,
                after_gpus=a.gpus_per_node * a.max_nodes if a else 0,
                unknown=any(side is not None and not side.priced for side in (b, a)),
            )
        )
    fixed_b = {_fixed_key(f.item): f for f in (before.fixed if before else [])}
    fixed_a = {_fixed_key(f.item): f for f in (after.fixed if after else [])}
    for key in list(fixed_b) + [k for k in fixed_a if k not in fixed_b]:
        fb, fa = fixed_b.get(key), fixed_a.get(key)
        fixed = fa or fb
        assert fixed is not None  # the key comes from one of the two reports
        lines.append(
            CostLine(
                item=key,
                kind="fixed",
                detail=fixed.item,
                before_min=fb.usd_per_hour_min if fb else 0.0,
                before_max=fb.usd_per_hour_max if fb else 0.0,
                after_min=fa.usd_per_hour_min if fa else 0.0,
                after_max=fa.usd_per_hour_max if fa else 0.0,
            )
        )
    current = after or before  # the caveats of the prices shown (spot dates, reservations)
    return CostDiff(
        lines=lines,
        notes=list(current.notes) if current else [],
        conventions=list(current.conventions) if current else [],
    )
