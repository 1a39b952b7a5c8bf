"""The diff as Markdown for a pull-request comment: summary first, then changes, policy and cost; long lists folded.

GitHub refuses comments over 65,536 characters. ``render_diff_markdown(diff, max_chars)`` tries the full rendering,
then drops the changed input paths of resources, then every folded list, and as a last resort cuts the text.
"""

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
from preview.diff.resources import REPLACE, ResourceChange
from preview.diff.spec import CHANGED

GITHUB_COMMENT_LIMIT = 65_536
MARKER_PREFIX = "gpu-cluster-diff"
FULL, NO_PATHS, SUMMARY = 2, 1, 0
MAX_ROWS = 200
"""Rows per folded table before the rest is counted instead of listed."""


def marker(stack: str) -> str:
    """Hidden in the rendered comment; lets CI find and update its own comment for this stack."""
    return f"<!-- {MARKER_PREFIX}:{stack} -->"


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", "<br>")


def code(text: object) -> str:
    return f"`{str(text).replace('`', '')}`"


def render_diff_markdown(diff: StackDiff, max_chars: int = GITHUB_COMMENT_LIMIT, heading: str = "###") -> str:
    for level in (FULL, NO_PATHS, SUMMARY):
        text = _render(diff, level, heading)
        if len(text) <= max_chars:
            return text
    note = "\n\n_…cut to fit a pull-request comment; run the diff locally for the rest._\n"
    return text[: max(0, max_chars - len(note))] + note


def _render(diff: StackDiff, level: int, heading: str) -> str:
    where = f" · {diff.cloud} {diff.region}" if diff.cloud else ""
    out = [marker(diff.stack), f"{heading} `{diff.stack}`{where}: offline diff against `{diff.base.label}`", ""]
    out += [f"> {n}" for n in side_notes(diff)] + ([""] if side_notes(diff) else [])
    if diff.head.state == INVALID:
        return "\n".join(out + _head_errors(diff)) + "\n"
    if not diff.has_changes:
        out += [no_change_line(diff), ""]
        return "\n".join(out + _footer(diff)) + "\n"
    items = headline(diff)
    if abs(diff.cost.delta_max) >= 0.005:
        items[0] = f"**{items[0]}**"  # what a reviewer looks at first
    out += [" · ".join(items), ""]
    out += _changes(diff)
    out += _policy(diff, level)
    out += _cost(diff, level)
    if level >= NO_PATHS:
        out += _resources(diff, with_paths=level == FULL)
        out += _settings(diff)
    elif diff.resources.changes or diff.entities:
        out += ["_Resource and setting details left out to fit a pull-request comment; run the diff locally._", ""]
    return "\n".join(out + _footer(diff)) + "\n"


def _head_errors(diff: StackDiff) -> list[str]:
    errors = diff.head.report.errors if diff.head.report else []
    out = [
        f"**The stack file is invalid: {len(errors)} configuration error{'s' if len(errors) != 1 else ''}; "
        f"nothing was rendered.**",
        "",
    ]
    for e in errors:
        out.append(
            f"- `{e.path}`: {cell(e.problem)} (received {code(e.value) if e.value is not None else 'nothing'}"
            f"; allowed: {cell(e.allowed or '-')}; fix: {cell(e.fix or '-')})"
        )
    return out + [""]


def _changes(diff: StackDiff) -> list[str]:
    lines = []
    for e in diff.entities:
        text = entity_line(diff, e, code)
        replaced = replacement_of(diff, e)
        if replaced is not None:
            text += f" · **replaces the node pool**: {replace_reason(replaced, code)}"
        lines.append(f"- {text}")
    replaced_names = {e.name for e in diff.entities if replacement_of(diff, e) is not None}
    for c in diff.resources.changes:
        if c.action == REPLACE and c.name not in replaced_names:
            lines.append(f"- **replaces** {code(c.type)} {code(c.name)}: {replace_reason(c, code)}")
        elif c.refused:
            lines.append(
                f"- **refused update** {code(c.type)} {code(c.name)}: {'; '.join(sorted(set(c.refused.values())))}"
            )
    if not lines:
        return []
    return ["**Changes**", "", *lines, ""]


def _violation(v: dict[str, Any], status: str) -> str:
    lines = violation_lines(v)
    enforcement = v.get("enforcement", "")
    level = f"**{enforcement}**" if enforcement == "mandatory" else enforcement
    return f"- {status} · {level} · {code(v.get('policy', ''))}: {cell('<br>'.join(lines))}"


def _policy(diff: StackDiff, level: int) -> list[str]:
    p = diff.policy
    if not (p.new or p.resolved or p.unchanged):
        return []
    out = ["**Policy**", ""]
    out += [_violation(v, "**new**") for v in p.new]
    out += [_violation(v, "resolved") for v in p.resolved]
    if not (p.new or p.resolved):
        out.append(f"- no new or resolved violation ({len(p.unchanged)} unchanged)")
    out.append("")
    if p.unchanged and level >= NO_PATHS:
        reworded = {id(a): b for b, a in p.reworded}
        out += [
            f"<details><summary>{len(p.unchanged)} unchanged violation{'s' if len(p.unchanged) != 1 else ''}</summary>",
            "",
        ]
        for v in p.unchanged[:MAX_ROWS]:
            out.append(_violation(v, "still" if id(v) not in reworded else "still (numbers changed)"))
        out += _more(len(p.unchanged)) + ["", "</details>", ""]
    return out


def _cost(diff: StackDiff, level: int) -> list[str]:
    c = diff.cost
    changed = c.changed_lines
    if not changed:
        return _fleet(diff)
    out = [
        "**Cost** (USD, catalog list prices)",
        "",
        "| item | $/h at min | $/h at max | Δ $/h at max | Δ $/month at max | GPUs at max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for line in changed:
        name = code(line.item) if line.kind == "pool" else f"_{cell(line.item)}_"
        gpus = f"{line.before_gpus} → {line.after_gpus}" if line.kind == "pool" else ""
        if line.unknown:  # never shown as $0
            out.append(f"| {name} | unknown | unknown | unknown | unknown | {gpus} |")
            continue
        out.append(
            f"| {name} | {_pair(line.before_min, line.after_min)} | {_pair(line.before_max, line.after_max)} | "
            f"{signed_usd(line.delta_max)} | {signed_usd(month(line.delta_max), 0)} | {gpus} |"
        )
    plus = " + unknown" if c.unknown else ""
    out.append(
        f"| **total** | {_pair(c.before_min, c.after_min)}{plus} | {_pair(c.before_max, c.after_max)}{plus} | "
        f"**{signed_usd(c.delta_max)}{plus}** | **{signed_usd(month(c.delta_max), 0)}{plus}** | "
        f"{c.before_gpus} → {c.after_gpus} |"
    )
    out.append("")
    out += [f"> {n}" for n in c.notes] + ([""] if c.notes else [])
    if c.conventions and level >= NO_PATHS:  # reference, not news: folded, and the first thing cut to fit
        out += [
            "<details><summary>How the cost is counted</summary>",
            "",
            *[f"- {n}" for n in c.conventions],
            "",
            "</details>",
            "",
        ]
    return out + _fleet(diff, always=True)


def _fleet(diff: StackDiff, always: bool = False) -> list[str]:
    """A fleet manager: what the whole fleet costs now, and which clusters changed (a worker's stack file, a worker
    added or dropped). Shown when the fleet changed, or with the manager's own cost change (``always``)."""
    f = diff.fleet
    if f is None or not (f["changed"] or always):
        return []
    out = [
        f"**Fleet total** (manager + workers): {_pair(f['usdPerHourMax']['before'], f['usdPerHourMax']['after'])}"
        f" $/h at max (**{signed_usd(f['usdPerHourMax']['delta'])}**, "
        f"{signed_usd(f['usdPerMonthMax']['delta'], 0)} $/month); GPUs at max "
        f"{f['maxGpus']['before']} → {f['maxGpus']['after']}",
        "",
    ]
    if f["clusters"]:
        out += [
            "| fleet cluster | stack | $/h at min | $/h at max | Δ $/h at max | GPUs at max |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for c in f["clusters"]:
            status = "" if c["status"] == "changed" else f" ({c['status']})"
            out.append(
                f"| {code(c['name'])}{status} | {code(c['stack'])} | "
                f"{_pair(c['usdPerHourMin']['before'], c['usdPerHourMin']['after'])} | "
                f"{_pair(c['usdPerHourMax']['before'], c['usdPerHourMax']['after'])} | "
                f"{signed_usd(c['usdPerHourMax']['delta'])} | "
                f"{c['maxGpus']['before']} → {c['maxGpus']['after']} |"
            )
        out.append("")
    return out


def _pair(before: float, after: float) -> str:
    return usd(after) if abs(after - before) < 0.005 else f"{usd(before)} → {usd(after)}"


def _resource_row(c: ResourceChange, with_paths: bool) -> str:
    detail = ""
    if with_paths and c.paths:
        shown = [
            f"{code(p)}{' (replace)' if p in c.replace_reasons else ' (refused)' if p in c.refused else ''}"
            for p in c.paths[:12]
        ]
        detail = ", ".join(shown) + (f" (+{len(c.paths) - 12} more)" if len(c.paths) > 12 else "")
    notes = [detail] if detail else []
    if c.unassessed:
        notes.append("replacement not assessed for " + ", ".join(code(p) for p in c.unassessed))
    if c.ignored:
        notes.append("ignored (autoscaler-owned): " + ", ".join(code(p) for p in c.ignored))
    notes += [cell(why) for why in sorted(set(c.refused.values()))]
    if c.note and c.action in ("update", "replace"):
        notes.append(cell(c.note))
    detail = " · ".join(notes)
    action = f"**{c.action}**" if c.action in ("replace", "remove") else c.action
    return f"| {action} | {code(c.type)} | {code(c.name)} | {cell(c.where) or 'stack'} | {detail} |"


def _resources(diff: StackDiff, with_paths: bool) -> list[str]:
    r = diff.resources
    if not r.changes:
        return []
    counts = ", ".join(f"{r.count(a)} to {a}" for a in ("replace", "remove", "add", "update") if r.count(a))
    out = [
        f"<details><summary>Resources: {counts} ({r.unchanged} unchanged)</summary>",
        "",
        "| action | type | name | in | changed inputs |",
        "|---|---|---|---|---|",
    ]
    out += [_resource_row(c, with_paths) for c in r.changes[:MAX_ROWS]]
    return out + _more(len(r.changes)) + ["", "</details>", ""]


def _settings(diff: StackDiff) -> list[str]:
    changed = [e for e in diff.entities if e.status == CHANGED]
    rows = sum(len(e.changes) for e in changed)
    if all(len(e.changes) <= MAX_INLINE for e in changed):  # the Changes list already shows every one
        return []
    out = [
        f"<details><summary>Every setting that changed ({rows})</summary>",
        "",
        "| what | setting | before | after |",
        "|---|---|---|---|",
    ]
    n = 0
    for e in changed:
        for c in e.changes:
            n += 1
            if n <= MAX_ROWS:
                out.append(
                    f"| {e.kind} {code(e.name)} | {cell(c.label)} | {cell(value(c.before))} | {cell(value(c.after))} |"
                )
    return out + _more(n) + ["", "</details>", ""]


def _more(total: int) -> list[str]:
    return ["", f"_…and {total - MAX_ROWS} more._"] if total > MAX_ROWS else []


def _footer(diff: StackDiff) -> list[str]:
    workers = " (a fleet manager's worker stack files too, each side at its own revision)" if diff.fleet else ""
    return [
        f"<sub>Both sides rendered offline by this branch's program (no cloud credentials): the stack file at "
        f"`{diff.base.label}` against the {diff.head.label}{workers}. The diff compares configurations, not code. "
        f"Replacement per the providers' ForceNew fields.</sub>"
    ]
