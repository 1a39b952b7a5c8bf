"""The Slurm section in text (rich) and Markdown: partitions, NodeSets and GRES, topology blocks, QOS, accounts and
priority weights, from ``preview/slurm_summary.py``."""

from __future__ import annotations

from typing import Any

from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text


def _weights(s: dict[str, Any]) -> str:
    w = s["priorityWeights"]
    acct = "accounting on (slurmdbd + MariaDB)" if s["accounting"] else "accounting off (no fair-share, no age)"
    return (
        f"priority/multifactor weights: fair-share {w['fairShare']}, age {w['age']}, job size {w['jobSize']}, "
        f"QOS {w['qos']} · {acct} · {s['preemptType']} mode {s['preemptMode']} · {s['scheduler']}"
    )


def _blocks(s: dict[str, Any]) -> list[str]:
    out = [
        f"topology {b['topology']}: {len(b['blocks'])} blocks of {b['blockSize']} nodes "
        f"({b['blocks'][0]} … {b['blocks'][-1]}; block sizes {', '.join(map(str, b['blockSizes']))})"
        for b in s["blocks"]
    ]
    if s["tree"]:
        out.append(
            f"topology {s['tree']['topology']} (tree): "
            + "; ".join(f"zone {z}: {', '.join(pools)}" for z, pools in s["tree"]["zones"].items())
        )
    sc = s.get("scaling")
    if sc:
        ranges = {n["pool"]: f"{n['minNodes']}-{n['nodes']}" for n in s["nodeSets"]}
        out.append(
            "follows the queue (Slurm power saving scales the NodeSet): "
            + ", ".join(f"{p} {ranges[p]} nodes" for p in sc["pools"])
            + f" · released after {sc['idleSeconds'] // 60} min idle · "
            f"a resumed node must register within {sc['resumeTimeoutSeconds'] // 60} min"
        )
    return out


def print_slurm(console: Console, s: dict[str, Any]) -> None:
    parts = Table(title="Slurm partitions (Slinky; one NodeSet per pool)", title_justify="left", header_style="bold")
    part_columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("partition", "left"),
        ("NodeSets", "left"),
        ("nodes", "right"),
        ("GPUs", "right"),
        ("default", "left"),
        ("tier", "right"),
        ("topology", "left"),
        ("exclusive", "left"),
    )
    for name, justify in part_columns:
        parts.add_column(name, justify=justify, no_wrap=True)
    for p in s["partitions"]:
        parts.add_row(
            p["name"],
            ", ".join(p["nodeSets"]),
            str(p["nodes"]),
            str(p["gpus"]),
            "yes" if p["default"] else "",
            str(p["priorityTier"]),
            p["topology"] or "flat",
            "yes" if p["exclusive"] else "",
        )
    console.print(parts)
    nodes = Table(title="Slurm nodes (dynamic, one slurmd pod per GPU node)", title_justify="left", header_style="bold")
    node_columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("NodeSet", "left"),
        ("node names", "left"),
        ("GRES", "left"),
        ("CPUs", "right"),
        ("RealMemory MiB", "right"),
    )
    for name, justify in node_columns:
        nodes.add_column(name, justify=justify, no_wrap=True)
    for n in s["nodeSets"]:
        nodes.add_row(n["pool"], n["nodeNames"], n["gres"], str(n["cpus"]), f"{n['realMemoryMib']:,}")
    console.print(nodes)
    if s["accounts"] or s["qos"]:
        accts = Table(
            title="Slurm accounts and QOS (applied by sacctmgr after deploy)", title_justify="left", header_style="bold"
        )
        for name in ("account", "fair-share", "QOS", "default QOS", "GPU cap (GrpTRES)"):
            accts.add_column(name, no_wrap=True)
        for a in s["accounts"]:
            accts.add_row(
                a["name"],
                str(a["fairshare"]),
                ", ".join(a["qos"]) or "normal",
                a["defaultQos"] or "normal",
                a["grpTres"] or "none",
            )
        for q in s["qos"]:
            accts.add_row(
                Text(f"QOS {q['name']}", style="dim"),
                "",
                f"priority {q['priority']}",
                "",
                "preempts "
                + (", ".join(q["preempts"]) or "nothing")
                + (f"; {qos_limits_text(q)}" if q.get("limits") else ""),
            )
        console.print(accts)
    for line in [*_blocks(s), _weights(s)]:
        console.print(Text(line, style="dim"))


def markdown_slurm(s: dict[str, Any] | None) -> list[str]:
    if not s:
        return []
    out = [
        "**Slurm** (Slinky)",
        "",
        "| partition | NodeSets | nodes | GPUs | default | tier | topology |",
        "|---|---|---:|---:|---|---:|---|",
    ]
    out += [
        f"| {p['name']} | {', '.join(p['nodeSets'])} | {p['nodes']} | {p['gpus']} | {'yes' if p['default'] else ''} "
        f"| {p['priorityTier']} | {p['topology'] or 'flat'} |"
        for p in s["partitions"]
    ]
    out += ["", "| NodeSet | nodes | GRES | CPUs | RealMemory MiB |", "|---|---|---|---:|---:|"]
    out += [
        f"| {n['pool']} | `{n['nodeNames']}` | `{n['gres']}` | {n['cpus']} | {n['realMemoryMib']} |"
        for n in s["nodeSets"]
    ]
    if s["accounts"]:
        out += ["", "| account | fair-share | QOS | default QOS | GPU cap |", "|---|---:|---|---|---|"]
        out += [
            f"| {a['name']} | {a['fairshare']} | {', '.join(a['qos']) or 'normal'} | {a['defaultQos'] or 'normal'} "
            f"| {a['grpTres'] or 'none'} |"
            for a in s["accounts"]
        ]
    if s["qos"]:
        out += [
            "",
            "QOS: "
            + "; ".join(
                f"`{q['name']}` priority {q['priority']} preempts {', '.join(q['preempts']) or 'nothing'}"
                + (f" ({qos_limits_text(q)})" if q.get("limits") else "")
                for q in s["qos"]
            ),
        ]
    out += [""] + [f"> {line}" for line in [*_blocks(s), _weights(s)]] + [""]
    return out


def qos_limits_text(q: dict[str, Any]) -> str:
    """``MaxWall 720 min, 16 GPUs per user, 24 GPUs in all`` for a QOS with limits; empty without."""
    lim = q.get("limits") or {}
    parts = []
    if "maxWallMinutes" in lim:
        parts.append(f"MaxWall {lim['maxWallMinutes']} min")
    if "maxGpusPerUser" in lim:
        parts.append(f"{lim['maxGpusPerUser']} GPUs per user")
    if "grpGpus" in lim:
        parts.append(f"{lim['grpGpus']} GPUs in all")
    return ", ".join(parts)
