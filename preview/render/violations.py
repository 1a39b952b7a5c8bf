"""Policy violations for people: grouped by pool (with the config path the user wrote), mandatory first."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from stacks.validate.issues import SpecIssue, sort_key

LEVEL_ORDER = {"mandatory": 0, "remediate": 0, "advisory": 1}


def grouped(violations: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """[(header, violations)], pools in config order, then the cluster, then other resources and the stack."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for v in violations:
        header = v["group"] + (f" · {v['configPath']}" if v.get("configPath") else "")
        groups.setdefault(header, []).append(v)

    def order(item: tuple[str, list[dict[str, Any]]]) -> tuple:
        v = item[1][0]
        path = v.get("configPath")
        return (0, sort_key(SpecIssue(path, ""))) if path else (1, (item[0],))

    return [
        (h, sorted(vs, key=lambda v: (LEVEL_ORDER.get(v["enforcement"], 2), v["policy"])))
        for h, vs in sorted(groups.items(), key=order)
    ]


def summary(violations: list[dict[str, Any]]) -> str:
    mandatory = sum(1 for v in violations if v["enforcement"] in ("mandatory", "remediate"))
    return f"{len(violations)} policy violation{'s' if len(violations) != 1 else ''} ({mandatory} mandatory)"


def print_violations(console: Console, violations: list[dict[str, Any]], waived: list[dict[str, Any]]) -> None:
    if violations:
        console.print(
            Text(
                summary(violations),
                style="bold red" if "mandatory" in {v["enforcement"] for v in violations} else "bold yellow",
            )
        )
        for header, items in grouped(violations):
            console.print(Text(header, style="bold"))
            for v in items:
                mandatory = v["enforcement"] in ("mandatory", "remediate")
                first, _, rest = v["message"].partition("\n")
                console.print(
                    Text.assemble(
                        ("  ✗ " if mandatory else "  ! ", "red" if mandatory else "yellow"),
                        (f"[{v['enforcement']}] {v['policy']}", "bold"),
                        f": {first}",
                    )
                )
                if rest:
                    console.print(Text(f"      {rest}"))
    for w in waived:
        console.print(Text(f"waived: {w['policy']} on {w['group']}: {w['reason']}", style="dim"))


def markdown_violations(violations: list[dict[str, Any]], waived: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    if violations:
        out += [f"**{summary(violations)}**", ""]
        for header, items in grouped(violations):
            out.append(f"- **{header}**")
            for v in items:
                first, _, rest = v["message"].partition("\n")
                mark = "❌" if v["enforcement"] in ("mandatory", "remediate") else "⚠️"
                out.append(
                    f"  - {mark} `{v['policy']}` ({v['enforcement']}): {first}" + (f"<br>{rest}" if rest else "")
                )
        out.append("")
    if waived:
        out += [f"<details><summary>{len(waived)} waived finding(s)</summary>", ""]
        out += [f"- `{w['policy']}` on {w['group']}: {w['reason']}" for w in waived]
        out += ["", "</details>", ""]
    return out
