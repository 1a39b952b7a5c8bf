"""The fabric table of the text preview: per pool its GPU fabric, networks, NICs, NCCL transport, bandwidth and
what was wired (DaemonSets, runtimes, NodeSets, DRA claims)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text


def print_fabric(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(
        title="GPU fabric (network between nodes; nominal bandwidth per node from the catalog)",
        title_justify="left",
        header_style="bold",
    )
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("pool", "left"),
        ("fabric", "left"),
        ("networks", "left"),
        ("NICs/node", "right"),
        ("NCCL transport", "left"),
        ("Gbps/node", "right"),
        ("wired", "left"),
    )
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=name not in ("NCCL transport", "wired", "networks"))
    for r in rows:
        if r["fabric"] is None:
            table.add_row(r["pool"], Text(f"none ({r['status']})", style="dim"), "", "", "", "", "")
            continue
        nets = _networks(r["networks"])
        if nets and not r["createdByGpuCluster"]:
            nets += " (existing)"
        if r.get("mode") == "managed":
            nets = "GKE-managed (auto)"
        wired = [*r["daemonSets"], *r["wired"]]
        table.add_row(
            r["pool"],
            r["fabricName"],
            nets or "—",
            str(r["nicsPerNode"]),
            r["ncclTransport"],
            f"{r['nominalGbpsPerNode']:,}",
            ", ".join(wired) or "—",
        )
    console.print(table)
    for r in rows:
        nv = r.get("nvlink")
        if nv:
            where = (
                f"workload policy {nv['acceleratorTopology']}"
                if nv["acceleratorTopology"]
                else f"UltraServer {nv['ultraserverType']}"
                if nv["ultraserverType"]
                else ""
            )
            cds = ", ".join(nv["computeDomains"]) or "none (no scheduling namespace)"
            console.print(
                f"  {r['pool']}: NVLink domains of {nv['domainGpus']} GPUs ({nv['domainNodes']} nodes, one per "
                f"{nv['domainLabel']} value), {nv['domainsAtMax']} at maxNodes"
                f"{'; ' + where if where else ''}; IMEX channels from ComputeDomain {cds}",
                highlight=False,
            )
        if r.get("efaCards"):
            console.print(f"  {r['pool']}: {r['efaCards']}", highlight=False)
        for c in r.get("contract") or []:
            unmet = f" (unmet: {', '.join(u['id'] for u in c['unmet'])})" if c["unmet"] else ""
            console.print(
                f"  {r['pool']}: {c['workload']}: {c['summary']}{unmet}; env from {c['envFrom']}; "
                f"image {c['image']} (pinned by {c['imagePin']})",
                highlight=False,
            )
    for r in rows:
        if r["fabric"] is not None and r.get("gkeVersionCheck"):
            floor = f"GKE ≥ {r['gkeVersionFloor']}: " if r.get("gkeVersionFloor") else ""
            console.print(
                f"  {r['pool']} ({r['fabricName']}, mode {r['mode']}): {floor}{r['gkeVersionCheck']}", highlight=False
            )


def _networks(names: list[str]) -> str:
    """``vpc1…vpc8 (8)``: first and last name and the count, the full list is in the JSON."""
    if not names:
        return ""
    return f"{names[0]}…{names[-1]} ({len(names)})" if len(names) > 2 else f"{', '.join(names)} ({len(names)})"
