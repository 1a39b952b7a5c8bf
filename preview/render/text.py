"""Terminal rendering with rich: resource tree, cost table, warnings and errors."""

from __future__ import annotations

import io

from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from preview.cost import CostReport, usd, usd_total
from preview.render.capacity import print_capacity_blocks
from preview.render.fabric import print_fabric
from preview.render.fleet import print_fleet
from preview.render.image_pins import print_host_images
from preview.render.maintenance import print_maintenance
from preview.render.pod_start import print_pod_start
from preview.render.violations import print_violations
from preview.render.queues import print_queues
from preview.render.slurm import print_slurm
from preview.report import PreviewReport

CLOUD_NAMES = {"gcp": "GKE", "aws": "EKS"}


def render_text(report: PreviewReport, color: bool | None = None, width: int | None = None) -> str:
    """Render for a terminal; ``width`` defaults to the real terminal's, and to 180 columns in pipes and CI logs."""
    buf = io.StringIO()
    if width is None:
        width = max(Console().width, 120) if Console().is_terminal else 180
    console = Console(file=buf, force_terminal=color, no_color=color is False, width=width, highlight=False)
    # A stack refused for a missing region still names its cloud, never "GKE None"
    where = (
        f"{CLOUD_NAMES.get(report.cloud or '', report.cloud)} {report.region or '(no region)'}" if report.cloud else ""
    )
    console.print(
        Text.assemble(
            ("gpu-cluster offline preview", "bold"),
            f" · stack {report.stack}",
            f" · {where}" if where else "",
            (" · no cloud credentials used", "dim"),
        )
    )
    if report.errors:
        _issues(console, report, errors=True)
        console.print(
            Text(
                f"Nothing was created or previewed: fix the configuration (exit {report.exit_code}).", style="bold red"
            )
        )
        return buf.getvalue()
    console.print()
    console.print(resource_tree(report))
    if report.cost:
        console.print()
        console.print(cost_table(report))
        for p in report.cost.pools:
            console.print(Text(f"price of {p.pool}: {p.price_source}, as of {p.price_as_of}", style="dim"))
        for note in [*report.cost.notes, *report.cost.conventions]:
            console.print(Text(f"note: {note}", style="dim"))
        print_capacity_blocks(console, report)
    if report.fleet:
        console.print()
        print_fleet(console, report.fleet)
    if report.gpu_runtime:
        console.print()
        console.print(runtime_table(report))
    if report.maintenance:
        console.print()
        print_maintenance(console, report.maintenance)
    if any(r["fabric"] is not None for r in report.fabric):
        console.print()
        print_fabric(console, report.fabric)
    if report.host_images:
        console.print()
        print_host_images(console, report.host_images)
    if report.pod_start:
        console.print()
        print_pod_start(console, report.pod_start)
    if report.queues:
        console.print()
        print_queues(console, report.queues)
    if report.slurm:
        console.print()
        print_slurm(console, report.slurm)
    if report.serving:
        from preview.render.serving import print_serving

        console.print()
        print_serving(console, report.serving)
    if report.violations or report.waived:
        console.print()
        print_violations(console, report.violations, report.waived)
    elif report.policy_rules:  # the pack ran and found nothing: say so, silence would read as "not checked"
        console.print()
        console.print(Text(f"policy pack: {len(report.policy_rules)} rules, no violations", style="green"))
    elif report.policies_skipped:  # exit 0 here says nothing about the rules: say they were not run
        console.print()
        console.print(Text("policy pack: skipped (--no-policies); no rule was checked", style="yellow"))
    if report.warnings:
        console.print()
        _issues(console, report, errors=False)
    console.print()
    style = "bold green" if report.exit_code == 0 else "bold red"
    console.print(Text(f"{len(report.resources)} resources · exit {report.exit_code}", style=style))
    return buf.getvalue()


def _issues(console: Console, report: PreviewReport, errors: bool) -> None:
    items = report.errors if errors else report.warnings
    title = f"{len(items)} configuration {'error' if errors else 'warning'}{'s' if len(items) != 1 else ''}"
    console.print(Text(title, style="bold red" if errors else "bold yellow"))
    for issue in items:
        console.print(
            Text.assemble(
                ("✗ " if errors else "! ", "red" if errors else "yellow"), (issue.path, "bold"), f": {issue.problem}"
            )
        )
        for label, value in (("received", issue.shown_value), ("allowed", issue.allowed), ("fix", issue.fix)):
            if value is not None:  # shown_value: quoted, shortened, `null` for an empty key
                console.print(Text(f"    {label + ':':<10}{value}", style="dim" if label != "fix" else ""))


def resource_tree(report: PreviewReport) -> Tree:
    by_urn = {r.urn: r for r in report.resources}
    children: dict[str, list] = {}
    for r in report.resources:
        children.setdefault(r.parent_urn if r.parent_urn in by_urn else "", []).append(r)
    root = Tree(Text(f"stack {report.stack} ({len(report.resources)} resources)", style="bold"))

    def add(node: Tree, parent: str) -> None:
        for r in sorted(children.get(parent, []), key=lambda r: (r.custom, r.type, r.name)):
            label = Text.assemble(
                (r.name, "bold" if not r.custom else ""), "  ", (r.type, "cyan" if r.custom else "magenta")
            )
            if r.protect:
                label.append("  protected", style="yellow")
            add(node.add(label), r.urn)

    add(root, "")
    return root


def runtime_table(report: PreviewReport) -> Table:
    """Per pool: the one advertiser of nvidia.com/gpu, the driver, sharing, and what the scheduler sees per node."""
    table = Table(
        title="GPU runtime (one nvidia.com/gpu advertiser per pool; cost above is per physical GPU)",
        title_justify="left",
        header_style="bold",
    )
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("pool", "left"),
        ("advertiser", "left"),
        ("driver", "left"),
        ("sharing", "left"),
        ("GPUs/node", "right"),
        ("nvidia.com/gpu/node", "right"),
        ("EFA plugin", "left"),
    )
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=True)
    for r in report.gpu_runtime:
        table.add_row(
            r["pool"],
            r["advertiser"],
            r["driver"],
            r["sharing"],
            str(r["physicalGpusPerNode"]),
            str(r["advertisedGpusPerNode"]),
            "yes" if r["efaDevicePlugin"] else "",
        )
    return table


def cost_basis(cost: CostReport) -> str:
    """What the figures are priced at: list prices, unless a pool has a negotiated price or a declared block fee."""
    kinds = []
    if any(p.overridden for p in cost.pools):
        kinds.append("priceOverrides")
    if any(p.block is not None for p in cost.pools):
        kinds.append("capacity block fees")
    if cost.fixed or any(p.priced and not p.overridden and p.block is None for p in cost.pools):
        kinds.append("catalog list prices")
    return ", ".join(kinds) or "catalog list prices"


def cost_table(report: PreviewReport) -> Table:
    cost = report.cost
    assert cost is not None  # shown only for a stack with a cost
    table = Table(
        title=f"Cost ({cost_basis(cost)}, USD)",
        title_justify="left",
        show_footer=True,
        header_style="bold",
        footer_style="bold",
    )
    cols: list[tuple[str, JustifyMethod, str]] = [
        ("pool", "left", "total"),
        ("machine", "left", ""),
        ("GPU", "left", ""),
        ("capacity", "left", ""),
        ("nodes", "right", ""),
        ("GPUs/node", "right", ""),
        ("$/node-h", "right", ""),
        ("$/GPU-h", "right", ""),
        ("$/h min", "right", usd_total(cost, cost.usd_per_hour_min)),
        ("$/h max", "right", usd_total(cost, cost.usd_per_hour_max)),
        ("$/month max", "right", usd_total(cost, cost.usd_per_month_max, 0)),
        ("price as of", "left", ""),
    ]
    for name, justify, footer in cols:
        table.add_column(name, justify=justify, footer=footer, no_wrap=True)
    for p in cost.pools:
        table.add_row(
            p.pool,
            p.machine_type,
            p.gpu_model,
            p.capacity,
            f"{p.min_nodes}-{p.max_nodes}",
            str(p.gpus_per_node),
            usd(p.usd_per_node_hour),
            usd(p.usd_per_gpu_hour, 3),
            usd(p.usd_per_hour_min),
            usd(p.usd_per_hour_max),
            usd(p.usd_per_month_max, 0),
            p.price_as_of,
        )
    for f in cost.fixed:
        what, _, detail = f.item.partition(" (")
        table.add_row(
            Text(what, style="dim"),
            Text(detail.rstrip(")"), style="dim"),
            "",
            "",
            "",
            "",
            "",
            "",
            f"{f.usd_per_hour_min:,.2f}",
            f"{f.usd_per_hour_max:,.2f}",
            "",
            Text(f.as_of, style="dim"),
        )
    table.columns[5].footer = f"{cost.max_gpus} max"
    return table
