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


def gang_cell(g: dict[str, Any] | None) -> str:
    """``256 pods: 9 min / 6 s`` and what the cold figure is made of (catalog/data/start-path.csv); on rack-scale
    NVLink pools the ComputeDomain start, on the warm path too unless only a NodeSet's nodes join it."""
    if not g:
        return "—"
    cd = ""
    if g.get("computeDomainS") is not None:  # rack-scale NVLink: every IMEX daemon of the domain Ready first
        cd = f", ComputeDomain {_t(g['computeDomainS'])}{'' if g.get('computeDomainWarm') else ' (cold only)'}"
    over = ""
    if g.get("overPodsReadyTimeoutS") is not None:  # Kueue evicts and requeues the gang before it is Ready
        over = (
            f"\n! cold start over waitForPodsReady ({g['overPodsReadyTimeoutS']} s): the gang is evicted and "
            "requeued; raise scheduling.gang.timeoutSeconds"
        )
    timeout = g.get("podsReadyTimeout")
    if timeout is not None:  # rack-scale default: raised from 600 s so a slowish cold start is not evicted
        over += (
            f"\nwaitForPodsReady {timeout['seconds']} s: this cold start x {timeout['margin']:g}, rounded up "
            "to a minute (scheduling.gang.timeoutSeconds sets it)"
        )
    warm = f"; warm measured: {g['warmMeasured']}" if g.get("warmMeasured") else ""
    return (
        f"{g['pods']} pod{'s' if g['pods'] != 1 else ''}: {_t(g['coldS'])} / {_t(g['warmS'])}\n"
        f"(node {_t(g['provisionS'])}, image {_t(g['pullS'])}: {g['image']}{cd}{warm}){over}"
    )


def _t(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
