"""The pod-start table of the text preview: per pool what shortens a pod's start on a new node and how a cold node
gets each declared image (streamed, preloaded, pre-pulled, or pulled in full from which registry)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

NO_IMAGES = "no images declared (podStart.images): a new node pulls every job image in full"


def print_pod_start(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(
        title="Pod start (what a job's pod waits for on a new node)", title_justify="left", header_style="bold"
    )
    for name in ("pool", "speeds up pod start", "cold start", "largest gang to running: cold / warm"):
        table.add_column(name, no_wrap=name == "pool")
    for r in rows:
        accelerators = list(r["accelerators"])
        if r.get("amiReleaseVersion"):
            accelerators.append(f"AMI release {r['amiReleaseVersion']} (pinned)")
        images = "\n".join(f"{i['image']}: {i['coldStart']}" for i in r["images"]) or NO_IMAGES
        table.add_row(r["pool"], "\n".join(accelerators) or "—", images, gang_cell(r.get("largestGang")))
    console.print(table)


def span_text(r: dict[str, float] | None, typical: float | None) -> str:
    """``4.6–19.8 min (typical 9.4 min)``; one figure where no source gives a range; ``—`` where there is none."""
    if typical is None:
        return "—"
    if r is None or r["low"] == r["high"]:
        return _t(typical)
    return f"{_t(r['low'])}–{_t(r['high'])} (typical {_t(typical)})"


def gang_cell(g: dict[str, Any] | None) -> str:
    """``256 pods: cold 6.1–21.4 min (typical 9.4 min) / warm 6 s`` and what the cold figure is made of
    (catalog/data/start-path.csv, the range from its sourced bounds); on rack-scale NVLink pools the ComputeDomain
    start, on the warm path too unless only a NodeSet's nodes join it."""
    if not g:
        return "—"
    cd = ""
    if g.get("computeDomainS") is not None:  # rack-scale NVLink: every IMEX daemon of the domain Ready first
        cd = f", ComputeDomain {_t(g['computeDomainS'])}{'' if g.get('computeDomainWarm') else ' (cold only)'}"
    over = ""
    if g.get("overPodsReadyTimeoutS") is not None:  # Kueue evicts and requeues the gang before it is Ready
        over = (
            f"\n! cold start over waitForPodsReady ({g['overPodsReadyTimeoutS']} s): evicted at the timeout and "
            "requeued; raise scheduling.gang.timeoutSeconds"
        )
    timeout = g.get("podsReadyTimeout")
    if timeout is not None:  # rack-scale default: raised from 600 s so a slowish cold start is not evicted
        over += (
            f"\nwaitForPodsReady {timeout['seconds']} s: this cold start x {timeout['margin']:g}, rounded up "
            "to a minute (scheduling.gang.timeoutSeconds sets it)"
        )
    warm = f"; warm: {g['warmMeasured']}" if g.get("warmMeasured") else ""
    return (
        f"{g['pods']} pod{'s' if g['pods'] != 1 else ''}: cold {span_text(g.get('coldRangeS'), g['coldS'])}"
        f" / warm {span_text(g.get('warmRangeS'), g['warmS'])}\n"
        f"(node {_t(g['provisionS'])}, image {_t(g['pullS'])}: {g['image']}{cd}{warm}){over}"
    )


def markdown_pod_start(rows: list[dict[str, Any]]) -> list[str]:
    """The largest gang's time to all pods running per pool, low–high (typical) from the sourced bounds."""
    gangs = [(r["pool"], r["largestGang"]) for r in rows if r.get("largestGang")]
    if not gangs:
        return []
    out = [
        "**Time to running** (largest gang, admission to all pods running; low–high from the sourced bounds of "
        "`catalog/data/start-path.csv`)",
        "",
        "| pool | pods | cold (new nodes) | warm (image on the nodes) |",
        "|---|---:|---|---|",
    ]
    for pool, g in gangs:
        over = f" ⚠ over waitForPodsReady {g['overPodsReadyTimeoutS']} s" if g.get("overPodsReadyTimeoutS") else ""
        out.append(
            f"| {pool} | {g['pods']} | {span_text(g.get('coldRangeS'), g['coldS'])}{over} | "
            f"{span_text(g.get('warmRangeS'), g['warmS'])} |"
        )
    return [*out, ""]


def _t(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
