"""The diff as plain text for a terminal: the same sections as the Markdown, nothing folded."""

from __future__ import annotations

from typing import Any

from preview.diff.compare import INVALID, StackDiff
from preview.diff.format import (
    no_change_line,
    MAX_INLINE,
    entity_line,
    headline,
    month,
    replace_reason,
    replacement_of,
    side_notes,
    signed_usd,
    usd,
    value,
    violation_lines,
)
from preview.diff.resources import REPLACE
from preview.diff.spec import CHANGED


def _plain(s: str) -> str:
    return s


def render_diff_text(diff: StackDiff) -> str:
    where = f" ({diff.cloud} {diff.region})" if diff.cloud else ""
    out = [f"Stack {diff.stack}{where}: offline diff of {diff.head.label} against {diff.base.label}", ""]
    out += [f"note: {n}" for n in side_notes(diff)] + ([""] if side_notes(diff) else [])
    if diff.head.state == INVALID:
        errors = diff.head.report.errors if diff.head.report else []
        out += [f"The stack file is invalid ({len(errors)} error(s)); nothing was rendered:", ""]
        out += [str(e) for e in errors]
        return "\n".join(out) + "\n"
    if not diff.has_changes:
        return "\n".join(out + [no_change_line(diff)]) + "\n"
    out += [f"  {item}" for item in headline(diff)] + [""]
    if diff.entities:
        out.append("Changes")
        for e in diff.entities:
            line = f"  {entity_line(diff, e, _plain)}"
            replaced = replacement_of(diff, e)
            if replaced is not None:
                line += f"\n    REPLACES the node pool: {replace_reason(replaced, _plain)}"
            out.append(line)
            if e.status == CHANGED and len(e.changes) > MAX_INLINE:
                out += [f"      {c.label}: {value(c.before)} → {value(c.after)}" for c in e.changes]
        out.append("")
    out += _policy(diff)
    out += _cost(diff)
    out += _resources(diff)
    return "\n".join(out) + "\n"


def _violation(v: dict[str, Any], status: str) -> list[str]:
    lines = violation_lines(v)
    first = f"  {status:<9} {v.get('enforcement', ''):<9} {v.get('policy', '')}: {lines[0] if lines else ''}"
    return [first] + [f"{'':<22}{line}" for line in lines[1:]]


def _policy(diff: StackDiff) -> list[str]:
    p = diff.policy
    if not (p.new or p.resolved or p.unchanged):
        return []
    out = ["Policy"]
    for v in p.new:
        out += _violation(v, "NEW")
    for v in p.resolved:
        out += _violation(v, "resolved")
    for v in p.unchanged:
        out += _violation(v, "still")
    return out + [""]


def _cost(diff: StackDiff) -> list[str]:
    c = diff.cost
    if not c.changed_lines:
        return _fleet(diff)
    out = [
        "Cost (USD, catalog list prices)",
        f"  {'item':<24} {'$/h at min':>22} {'$/h at max':>26} {'Δ $/h max':>12} {'Δ $/month max':>14} "
        f"{'GPUs max':>12}",
    ]

    def row(name: str, bmin: float, amin: float, bmax: float, amax: float, bg: int, ag: int, gpus: bool) -> str:
        mins = usd(amin) if abs(amin - bmin) < 0.005 else f"{usd(bmin)} → {usd(amin)}"
        maxs = usd(amax) if abs(amax - bmax) < 0.005 else f"{usd(bmax)} → {usd(amax)}"
        g = f"{bg} → {ag}" if gpus else ""
        return (
            f"  {name:<24} {mins:>22} {maxs:>26} {signed_usd(amax - bmax):>12} "
            f"{signed_usd(month(amax - bmax), 0):>14} {g:>12}"
        )

    for line in c.changed_lines:
        if line.unknown:  # never shown as $0
            out.append(
                f"  {line.item:<24} {'unknown':>22} {'unknown':>26} {'unknown':>12} {'unknown':>14} "
                f"{f'{line.before_gpus} → {line.after_gpus}':>12}"
            )
            continue
        out.append(
            row(
                line.item,
                line.before_min,
                line.after_min,
                line.before_max,
                line.after_max,
                line.before_gpus,
                line.after_gpus,
                line.kind == "pool",
            )
        )
    total = row("total", c.before_min, c.after_min, c.before_max, c.after_max, c.before_gpus, c.after_gpus, True)
    out.append(total + (f"  (+ unknown: {', '.join(c.unknown)})" if c.unknown else ""))
    out += [f"  note: {n}" for n in [*c.notes, *c.conventions]]
    return out + [""] + _fleet(diff, always=True)


def _fleet(diff: StackDiff, always: bool = False) -> list[str]:
    """A fleet manager: the fleet total and each cluster that changed, each side's workers at its own revision."""
    f = diff.fleet
    if f is None or not (f["changed"] or always):
        return []

    def pair(entry: dict[str, Any]) -> str:
        b, a = entry["before"], entry["after"]
        return usd(a) if abs(a - b) < 0.005 else f"{usd(b)} → {usd(a)}"

    out = [
        "Fleet (manager + workers, USD)",
        f"  {'cluster':<24} {'$/h at min':>22} {'$/h at max':>26} {'Δ $/h max':>12} {'GPUs max':>12}",
    ]
    rows = [
        ({**c, "name": c["name"] + ("" if c["status"] == "changed" else f" ({c['status']})")}) for c in f["clusters"]
    ] + [{"name": "fleet total", **f}]
    for r in rows:
        gpus = f"{r['maxGpus']['before']} → {r['maxGpus']['after']}"
        out.append(
            f"  {r['name']:<24} {pair(r['usdPerHourMin']):>22} {pair(r['usdPerHourMax']):>26} "
            f"{signed_usd(r['usdPerHourMax']['delta']):>12} {gpus:>12}"
        )
    return out + [""]


def _resources(diff: StackDiff) -> list[str]:
    r = diff.resources
    if not r.changes:
        return []
    out = [f"Resources ({r.unchanged} unchanged)"]
    for c in r.changes:
        where = f" in {c.where}" if c.where else ""
        out.append(f"  {c.action:<8} {c.type} {c.name}{where}")
        for path in c.paths:
            why = (
                f"  (forces replacement: {c.replace_reasons[path]})"
                if path in c.replace_reasons
                else f"  (REFUSED: {c.refused[path]})"
                if path in c.refused
                else ""
            )
            out.append(f"             {path}{why}")
        if c.unassessed:
            out.append(f"             replacement not assessed for: {', '.join(c.unassessed)}")
        if c.ignored:
            out.append(f"             ignored (autoscaler-owned): {', '.join(c.ignored)}")
        if c.note and c.action in ("update", REPLACE):
            out.append(f"             note: {c.note}")
    return out + [""]
