"""Markdown sized for a pull-request comment: summary and cost up front, long lists folded."""

from __future__ import annotations

from preview.cost import usd, usd_total
from preview.render.capacity import markdown_capacity_blocks
from preview.render.pod_start import markdown_pod_start
from preview.render.violations import markdown_violations
from preview.render.queues import markdown_queues
from preview.render.slurm import markdown_slurm
from preview.render.fleet import fleet_markdown
from preview.report import PreviewReport


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: PreviewReport) -> str:
    where = f" · {report.cloud} {report.region}" if report.cloud else ""
    out = [f"### gpu-cluster preview: `{report.stack}`{where}", ""]
    if report.errors:
        out += [f"**{len(report.errors)} configuration error(s); nothing was previewed.**", ""]
        out += [
            f"- `{e.path}`: {_cell(e.problem)} (received `{e.shown_value}`; allowed: {_cell(e.allowed or '-')}; "
            f"fix: {_cell(e.fix or '-')})"
            for e in report.errors
        ]
        return "\n".join(out) + "\n"
    c = report.cost
    if c:
        out += [
            f"**{c.max_gpus} GPUs at max** · **${usd_total(c, c.usd_per_hour_max)}/h at max** "
            f"(${usd_total(c, c.usd_per_month_max, 0)}/month) · ${usd_total(c, c.usd_per_hour_min)}/h at min · "
            f"{len(report.resources)} resources",
            "",
        ]
        out += [
            "| pool | machine | GPU | capacity | nodes | GPUs/node | $/GPU-h | $/h min | $/h max | $/month max |"
            " price (as of) |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for p in c.pools:
            out.append(
                f"| {p.pool} | `{p.machine_type}` | {p.gpu_model} | {p.capacity} | {p.min_nodes}-{p.max_nodes}"
                f" | {p.gpus_per_node} | {usd(p.usd_per_gpu_hour, 3)} | {usd(p.usd_per_hour_min)} | "
                f"{usd(p.usd_per_hour_max)} | {usd(p.usd_per_month_max, 0)} | {_cell(p.price_source)} "
                f"({p.price_as_of}) |"
            )
        for f in c.fixed:
            out.append(
                f"| _{_cell(f.item)}_ | | | | | | | {f.usd_per_hour_min:,.2f} | {f.usd_per_hour_max:,.2f} | "
                f"| ({f.as_of}) |"
            )
        out.append(
            f"| **total** | | | | | {c.max_gpus} max | | **{usd_total(c, c.usd_per_hour_min)}** | "
            f"**{usd_total(c, c.usd_per_hour_max)}** | **{usd_total(c, c.usd_per_month_max, 0)}** | |"
        )
        notes = [*c.notes, *c.conventions]
        out += [""] + [f"> {n}" for n in notes] + ([""] if notes else [])
        out += markdown_capacity_blocks(report)
    if report.fleet:
        out += fleet_markdown(report.fleet)
    if report.gpu_runtime:
        out += [
            "**GPU runtime** (one `nvidia.com/gpu` advertiser per pool; cost is per physical GPU)",
            "",
            "| pool | advertiser | driver | sharing | GPUs/node | nvidia.com/gpu/node | EFA plugin |",
            "|---|---|---|---|---:|---:|---|",
        ]
        out += [
            f"| {r['pool']} | {r['advertiser']} | {r['driver']} | {r['sharing']} | {r['physicalGpusPerNode']} | "
            f"{r['advertisedGpusPerNode']} | {'yes' if r['efaDevicePlugin'] else ''} |"
            for r in report.gpu_runtime
        ]
        out.append("")
    out += markdown_pod_start(report.pod_start)
    out += markdown_queues(report.queues)
    out += markdown_slurm(report.slurm)
    out += markdown_violations(report.violations, report.waived)
    if report.policy_rules and not (report.violations or report.waived):
        out += [f"**Policy pack:** {len(report.policy_rules)} rules, no violations.", ""]
    elif report.policies_skipped:
        out += ["**Policy pack:** skipped (`--no-policies`); no rule was checked.", ""]
    if report.warnings:
        out += [f"<details><summary>{len(report.warnings)} warning(s)</summary>", ""]
        out += [f"- `{w.path}`: {_cell(w.problem)}; fix: {_cell(w.fix or '-')}" for w in report.warnings]
        out += ["", "</details>", ""]
    out += [
        f"<details><summary>{len(report.resources)} resources</summary>",
        "",
        "| type | name | parent |",
        "|---|---|---|",
    ]
    names = {r.urn: r.name for r in report.resources}
    # registration order varies run to run under the mocks: sort as the JSON does, so the same stack gives the same page
    out += [
        f"| `{r.type}` | {r.name} | {names.get(r.parent_urn, 'stack')} |"
        for r in sorted(report.resources, key=lambda r: r.urn)
    ]
    out += ["", "</details>", ""]
    return "\n".join(out)
