"""The Fleet section (a MultiKueue manager's preview) for the terminal and for Markdown."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

CLOUD = {"gcp": "GKE", "aws": "EKS"}


def _gpus(gpus: dict[str, int]) -> str:
    return ", ".join(f"{n} {m}" for m, n in gpus.items()) or "none (system pool only)"


def _worker(queue: dict[str, Any], model: str, worker: str) -> str:
    window = (queue.get("windows") or {}).get(model, {}).get(worker)
    if window is None:
        return worker
    return f"{worker} only inside its block window (from {window['start']} to {window['end']})"


def _runs_on(queue: dict[str, Any]) -> str:
    return "; ".join(
        f"{m} ({queue['runtimes'][m]}): {', '.join(_worker(queue, m, x) for x in w) or 'NO WORKER'}"
        for m, w in queue["runsOn"].items()
    )


def _usd(value: float, complete: bool, digits: int = 2) -> str:
    """A sum of the priced items, marked when something has no price (never shown as if it were complete)."""
    return f"{value:,.{digits}f}" + ("" if complete else " + unknown")


def _blended(totals: dict[str, Any]) -> str:
    if totals["blendedUsdPerGpuHour"] is not None:
        return f"blended ${totals['blendedUsdPerGpuHour']:,.3f}/GPU-h (GPU pools' $/h max over GPUs at max)"
    if totals["unpricedPools"]:
        return f"blended $/GPU-h unknown: no price for {', '.join(totals['unpricedPools'])}"
    return ""


def _dispatch(fleet: dict[str, Any]) -> str:
    step = f", {fleet['stepSize']} at a time in this order" if fleet.get("stepSize") else ""
    return f"dispatcher {fleet['dispatcher']}{step} · workers {', '.join(fleet['workers'])}"


def egress_line(fleet: dict[str, Any]) -> str | None:
    """The manager's egress addresses: reserved or read at deploy (unknown until then), or declared."""
    e = fleet.get("egress")
    if not e:
        return None
    where = {
        "reserved": f"{e['reserved']} static NAT address{'es' if e['reserved'] != 1 else ''} reserved (Cloud NAT "
        "MANUAL_ONLY)",
        "natGateways": "the Elastic IPs of the subnets' NAT gateways",
        "declared": "declared (egressCidrs)",
    }.get(e["source"], e["source"])
    known = ", ".join(e["addresses"]) if e["addresses"] is not None else "known after the manager's pulumi up"
    admitted = [
        f"by reference (fleet.manager): {', '.join(e['byReference'])}" if e["byReference"] else "",
        f"by listing: {', '.join(e['listed'])}" if e["listed"] else "",
    ]
    return f"manager egress: {where}, fleetEgressAddresses {known}; workers admit them " + "; ".join(
        a for a in admitted if a
    )


def print_fleet(console: Console, fleet: dict[str, Any]) -> None:
    table = Table(
        title="Fleet (MultiKueue: this manager queues, the first worker whose Kueue admits a job runs it)",
        title_justify="left",
        header_style="bold",
        show_footer=True,
        footer_style="bold",
    )
    totals = fleet["totals"]
    for name, justify, footer in (
        ("cluster", "left", "fleet"),
        ("role", "left", ""),
        ("stack", "left", ""),
        ("where", "left", ""),
        ("GPUs at max", "left", _gpus(totals["gpusByModel"])),
        ("$/h min", "right", _usd(totals["usdPerHourMin"], totals["complete"])),
        ("$/h max", "right", _usd(totals["usdPerHourMax"], totals["complete"])),
        ("$/month max", "right", _usd(totals["usdPerMonthMax"], totals["complete"], 0)),
    ):
        table.add_column(name, justify=justify, footer=footer, no_wrap=True)  # type: ignore[arg-type]
    for c in fleet["clusters"]:
        table.add_row(
            c["name"],
            c["role"],
            c["stack"],
            f"{CLOUD.get(c['cloud'], c['cloud'])} {c['region']}",
            _gpus(c["gpus"]),
            _usd(c["usdPerHourMin"], c["complete"]),
            _usd(c["usdPerHourMax"], c["complete"]),
            _usd(c["usdPerMonthMax"], c["complete"], 0),
        )
    console.print(table)
    blended = _blended(totals)
    console.print(
        Text(
            f"{_dispatch(fleet)} · {totals['maxGpus']} GPUs at max" + (f" · {blended}" if blended else ""), style="dim"
        )
    )
    for note in fleet.get("notes", []):
        console.print(Text(f"note: {note}", style="dim"))
    if egress_line(fleet):
        console.print(Text(egress_line(fleet) or "", style="dim"))
    queues = Table(
        title="Fleet queues (manager quota per GPU model; where each can run)",
        title_justify="left",
        header_style="bold",
    )
    for name in ("queue", "namespace", "quota", "runs on (runtime: workers)"):
        queues.add_column(name, no_wrap=name != "runs on (runtime: workers)")
    for q in fleet["queues"]:
        queues.add_row(q["name"], q["namespace"], _gpus(q["quotas"]), _runs_on(q))
    console.print(queues)


def fleet_markdown(fleet: dict[str, Any]) -> list[str]:
    totals = fleet["totals"]
    lines = [
        "### Fleet",
        "",
        f"MultiKueue {_dispatch(fleet)}.",
        "",
        "| cluster | role | stack | where | GPUs at max | $/h min | $/h max | $/month max |",
        "|---|---|---|---|---|---:|---:|---:|",
    ]
    for c in fleet["clusters"]:
        lines.append(
            f"| {c['name']} | {c['role']} | `{c['stack']}` | {CLOUD.get(c['cloud'], c['cloud'])} {c['region']} | "
            f"{_gpus(c['gpus'])} | {_usd(c['usdPerHourMin'], c['complete'])} | "
            f"{_usd(c['usdPerHourMax'], c['complete'])} | {_usd(c['usdPerMonthMax'], c['complete'], 0)} |"
        )
    done = totals["complete"]
    lines.append(
        f"| **fleet** | | | | {_gpus(totals['gpusByModel'])} | **{_usd(totals['usdPerHourMin'], done)}** | "
        f"**{_usd(totals['usdPerHourMax'], done)}** | **{_usd(totals['usdPerMonthMax'], done, 0)}** |"
    )
    if totals["blendedUsdPerGpuHour"] is not None:
        lines += ["", f"Blended ${totals['blendedUsdPerGpuHour']:,.3f}/GPU-h over {totals['maxGpus']} GPUs at max."]
    elif _blended(totals):
        lines += ["", f"{_blended(totals)[0].upper()}{_blended(totals)[1:]}."]
    if fleet.get("notes"):
        lines += ["", *[f"- {n}" for n in fleet["notes"]]]
    if egress_line(fleet):
        lines += ["", f"{egress_line(fleet)}."]
    lines += ["", "| queue | namespace | quota | runs on |", "|---|---|---|---|"]
    lines += [f"| {q['name']} | {q['namespace']} | {_gpus(q['quotas'])} | {_runs_on(q)} |" for q in fleet["queues"]]
    return lines + [""]
