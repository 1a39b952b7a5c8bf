"""Wording shared by the text and Markdown diff renderers: values, money deltas, one line per changed thing."""

from __future__ import annotations

from typing import Any, Callable

from preview.cost import HOURS_PER_MONTH
from preview.diff.compare import ABSENT, INVALID, StackDiff
from preview.diff.cost import EPSILON_USD, CostLine
from preview.diff.resources import REPLACE, ResourceChange
from preview.diff.spec import ADDED, POOL, REMOVED, EntityDiff, FieldChange
from preview.diff.replacement import RULES

GPU_LABELS = ("quota ", "borrowing limit ", "lending limit ")
"""Labels whose values count GPUs: "quota h100 64 → 32 GPUs"."""
MAX_INLINE = 4
"""Setting changes written out on an entity's line; the rest are counted (the details list them all)."""
SHORT_LABELS = {"fair-share weight": "weight"}
BARE_LABELS = {"machine type", "GPU", "capacity", "placement", "pools"}


def value(v: Any) -> str:
    if v is None:
        return "unset"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ", ".join(value(x) for x in v) if v else "none"
    if v == "":
        return '""'
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def field_change(c: FieldChange) -> str:
    """``max nodes 8 → 16``; GPU counts say so: ``quota h100 64 → 32 GPUs``, ``quota a100 2 GPUs → none``."""
    if not c.label.startswith(GPU_LABELS):
        return f"{c.label} {value(c.before)} → {value(c.after)}"
    if c.before is not None and c.after is not None:
        return f"{c.label} {value(c.before)} → {value(c.after)} GPUs"
    gpus = lambda v: "none" if v is None else f"{value(v)} GPUs"  # noqa: E731
    return f"{c.label} {gpus(c.before)} → {gpus(c.after)}"


def usd(amount: float, decimals: int = 2) -> str:
    return f"${amount:,.{decimals}f}"


def signed_usd(amount: float, decimals: int = 2) -> str:
    if abs(amount) < EPSILON_USD:
        return usd(0.0, decimals)
    return ("+" if amount > 0 else "−") + usd(abs(amount), decimals)


def month(usd_per_hour: float) -> float:
    return usd_per_hour * HOURS_PER_MONTH


def facts(e: EntityDiff) -> str:
    """What an added or removed entity is: ``a3-highgpu-8g (8 × H100_80GB), 0-8 nodes, 64 GPUs at max, ...``."""
    f = {k: v for k, v in e.facts.items() if v is not None}
    if e.kind == POOL and {"machine type", "min nodes", "max nodes"} <= f.keys():
        gpus = f" ({f['GPUs per node']} × {f['GPU']})" if "GPU" in f and "GPUs per node" in f else ""
        parts = [f"{f['machine type']}{gpus}", f"{f['min nodes']}-{f['max nodes']} nodes"]
        if "max GPUs" in f:
            parts.append(f"{f['max GPUs']} GPUs at max")
        parts += [str(f[k]) for k in ("capacity", "placement") if k in f]
        return ", ".join(parts)
    parts = []
    for label, v in f.items():
        if label in BARE_LABELS:
            parts.append(value(v))
        elif label.startswith(GPU_LABELS):
            parts.append(f"{label} {value(v)} GPUs")
        else:
            parts.append(f"{SHORT_LABELS.get(label, label)} {value(v)}")
    return ", ".join(parts)


def cost_line_of(diff: StackDiff, e: EntityDiff) -> CostLine | None:
    if e.kind != POOL:
        return None
    return next((line for line in diff.cost.lines if line.kind == "pool" and line.item == e.name), None)


def replacement_of(diff: StackDiff, e: EntityDiff) -> ResourceChange | None:
    """The pool's node pool / node group, when the change replaces it (matched by name, as Pulumi names it)."""
    if e.kind != POOL:
        return None
    return next(
        (c for c in diff.resources.changes if c.action == REPLACE and c.type in RULES and c.name == e.name), None
    )


def entity_line(diff: StackDiff, e: EntityDiff, code: Callable[[str], str] = lambda s: f"`{s}`") -> str:
    """``pool `h100`: max nodes 8 → 16, max GPUs 64 → 128 · +$707.92/h at max``."""
    head = f"{e.kind} {code(e.name)}"
    what = facts(e)
    if e.status == ADDED:
        text = f"{head} added" + (f": {what}" if what else "")
    elif e.status == REMOVED:
        text = f"{head} removed" + (f" (was {what})" if what else "")
    else:
        shown = ", ".join(field_change(c) for c in e.changes[:MAX_INLINE])
        more = len(e.changes) - MAX_INLINE
        text = f"{head}: {shown}" + (f" and {more} more" if more > 0 else "")
    line = cost_line_of(diff, e)
    if line is not None and abs(line.delta_max) >= EPSILON_USD:
        text += f" · {signed_usd(line.delta_max)}/h at max"
    return text


def replace_reason(c: ResourceChange, code: Callable[[str], str] = lambda s: f"`{s}`") -> str:
    fields = sorted(set(c.replace_reasons.values()))
    if all(" changed: " in f for f in fields):  # Kubernetes objects: each reason is a sentence already
        return "; ".join(fields)
    paths = ", ".join(code(p) for p in list(c.replace_reasons)[:4])
    more = f" (+{len(c.replace_reasons) - 4} more)" if len(c.replace_reasons) > 4 else ""
    return f"{paths}{more} changed, and the provider replaces on {', '.join(fields)}"


def headline(diff: StackDiff) -> list[str]:
    """The summary items, most important first: cost, GPUs, resources, policy."""
    c = diff.cost
    items: list[str] = []
    plus = f" + unknown ({', '.join(c.unknown)})" if c.unknown else ""
    if abs(c.delta_max) >= EPSILON_USD:
        items.append(
            f"{signed_usd(c.delta_max)}/h at max ({usd(c.before_max)} → {usd(c.after_max)}; "
            f"{signed_usd(month(c.delta_max), 0)}/month){plus}"
        )
    else:
        items.append(f"cost at max unchanged ({usd(c.after_max)}/h){plus}")
    if abs(c.delta_min) >= EPSILON_USD:
        items.append(f"{signed_usd(c.delta_min)}/h at min ({usd(c.before_min)} → {usd(c.after_min)})")
    if c.before_gpus != c.after_gpus:
        items.append(f"GPUs at max {c.before_gpus} → {c.after_gpus}")
    fleet = diff.fleet
    if fleet is not None and fleet["changed"]:  # a manager: the fleet changes with its workers' stack files too
        f = fleet["usdPerHourMax"]
        items.append(
            f"fleet {signed_usd(f['delta'])}/h at max ({usd(f['before'])} → {usd(f['after'])}; "
            f"{len(fleet['clusters'])} cluster{'s' if len(fleet['clusters']) != 1 else ''} changed)"
        )
    r = diff.resources
    counts = [f"{r.count(a)} to {a}" for a in ("replace", "remove", "add", "update") if r.count(a)]
    refused = sum(1 for ch in r.changes if ch.refused)
    if refused:
        counts.append(f"{refused} update{'s' if refused != 1 else ''} the API server refuses")
    items.append("resources: " + (", ".join(counts) if counts else "no change"))
    p = diff.policy
    policy = []
    if p.new:
        mandatory = len(p.new_mandatory)
        policy.append(
            f"{len(p.new)} new violation{'s' if len(p.new) != 1 else ''}"
            + (f" ({mandatory} mandatory)" if mandatory else "")
        )
    if p.resolved:
        policy.append(f"{len(p.resolved)} resolved")
    if p.unchanged:
        policy.append(f"{len(p.unchanged)} unchanged")
    if diff.policies_skipped:  # nothing was checked: "no violations" would read as a pass
        policy.append("skipped (--no-policies)")
    items.append("policy: " + (", ".join(policy) if policy else "no violations"))
    return items


def no_change_line(diff: StackDiff) -> str:
    if diff.policies_skipped:
        return "No change: both sides render the same resources and cost; the policy pack was skipped (--no-policies)."
    return "No change: both sides render the same resources, cost and policy results."


def side_notes(diff: StackDiff) -> list[str]:
    """Sentences about absent or invalid sides, which change how the rest reads."""
    notes = []
    if diff.base.state == ABSENT:
        notes.append(f"New stack: Pulumi.{diff.stack}.yaml does not exist at {diff.base.label}; everything is added.")
    elif diff.base.state == INVALID:
        n = len(diff.base.report.errors) if diff.base.report else 0
        notes.append(
            f"The stack file at {diff.base.label} was invalid ({n} error{'s' if n != 1 else ''}), so nothing "
            f"was rendered for it: everything below reads as added."
        )
    if diff.head.state == ABSENT:
        notes.append("Stack deleted: the stack file is gone from the working tree; everything is removed.")
    return notes


def violation_lines(v: dict[str, Any]) -> list[str]:
    return [line for line in str(v.get("message", "")).split("\n") if line.strip()]
