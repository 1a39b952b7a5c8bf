"""The scheduling section in text (rich) and Markdown: quota per queue, pool and GPU model, borrowing and lending,
the share of each pool's capacity that is promised, and $/hour of each team's nominal quota.

With workload slurm only what Slurm reads is shown: queues are accounts (no namespace, no lending limit), the
summary names fair-share, GPU caps and backfill instead of Kueue's queueing strategy and gang admission, and a
pool's placement is its partition and topology."""

from __future__ import annotations

from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from stacks.plan.quota import QueueQuota, QuotaPlan


def _borrow(q: QueueQuota, plan: QuotaPlan) -> str:
    if plan.cohort is None:
        return "-"
    return "no limit" if q.borrowing_limit is None else str(q.borrowing_limit)


def _lend(q: QueueQuota, plan: QuotaPlan) -> str:
    if plan.cohort is None:
        return "-"
    return "all unused" if q.lending_limit is None else str(q.lending_limit)


def _slurm(plan: QuotaPlan) -> bool:
    return plan.workload == "slurm"


def summary(plan: QuotaPlan) -> str:
    over = " · overcommit allowed" if plan.overcommit else ""
    if _slurm(plan):
        cap = f"nominal + borrow ≤ (cohort {plan.cohort})" if plan.cohort else "nominal GPUs"
        return (
            f"workload slurm · each queue is a Slurm account with fair-share shares and a GPU cap (GrpTRES) = "
            f"{cap} · jobs start in multifactor priority order with backfill, all nodes of a job at once{over}"
        )
    gang = (
        f"gang admission: all pods ready within {plan.gang_timeout_seconds} s"
        if plan.gang_timeout_seconds is not None
        else "gang admission: off"
    )
    cohort = f"cohort {plan.cohort} (borrowing, lending, fair sharing)" if plan.cohort else "no cohort (no borrowing)"
    return f"workload {plan.workload} · {cohort} · {plan.queueing_strategy} · {gang}{over}"


def print_queues(console: Console, plan: QuotaPlan) -> None:
    console.print(queue_table(plan))
    console.print(Text(summary(plan), style="dim"))
    for line in plan.access:
        console.print(Text(f"tenancy: {line}", style="dim"))
    console.print()
    console.print(pool_table(plan))


def queue_table(plan: QuotaPlan) -> Table:
    usd = plan.queue_usd_per_hour()
    slurm = _slurm(plan)
    title = (
        "Slurm accounts (GPU quota per pool; $/h = nominal GPUs × the pool's $/GPU-h)"
        if slurm
        else "Queues (GPU quota per pool; $/h = nominal GPUs × the pool's $/GPU-h)"
    )
    table = Table(title=title, title_justify="left", header_style="bold")
    namespace: list[tuple[str, JustifyMethod]] = [] if slurm else [("namespace", "left")]
    lend: list[tuple[str, JustifyMethod]] = [] if slurm else [("lend ≤", "right")]
    columns: list[tuple[str, JustifyMethod]] = [
        ("account" if slurm else "queue", "left"),
        *namespace,
        ("pool", "left"),
        ("GPU", "left"),
        ("nominal GPUs", "right"),
        ("borrow ≤", "right"),
        *lend,
        ("$/h", "right"),
        (f"{'account' if slurm else 'queue'} $/h", "right"),
    ]
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=True)
    shown: set[str] = set()
    for q in plan.quotas:
        first = q.queue not in shown
        shown.add(q.queue)
        cells = [
            q.queue if first else "",
            *([] if slurm else [q.namespace if first else ""]),
            q.pool,
            q.gpu_model,
            str(q.gpus),
            _borrow(q, plan),
            *([] if slurm else [_lend(q, plan)]),
            _money(q.usd_per_hour),
            _money(usd[q.queue]) if first else "",
        ]
        table.add_row(*cells)
    return table


def pool_table(plan: QuotaPlan) -> Table:
    table = Table(title="Promised capacity per pool", title_justify="left", header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("pool", "left"),
        ("GPU", "left"),
        ("GPUs at max", "right"),
        ("promised", "right"),
        ("share", "right"),
        ("placement", "left"),
    )
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=name != "placement")
    for p in plan.pools:
        share = Text(f"{p.share:.0%}", style="bold red" if p.overcommitted else "")
        table.add_row(p.pool, p.gpu_model, str(p.capacity_gpus), str(p.promised_gpus), share, p.placement)
    return table


def _money(value: float | None) -> str:
    """``1,234.57``, or ``unknown`` (a pool without a public price), never 0."""
    return "unknown" if value is None else f"{value:,.2f}"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|")


def markdown_queues(plan: QuotaPlan | None) -> list[str]:
    if plan is None:
        return []
    usd = plan.queue_usd_per_hour()
    if _slurm(plan):
        out = [
            f"**Slurm accounts** · {_cell(summary(plan))}",
            "",
            "| account | pool | GPU | nominal GPUs | borrow ≤ | $/h |",
            "|---|---|---|---:|---:|---:|",
        ]
        out += [
            f"| {q.queue} | {q.pool} | {q.gpu_model} | {q.gpus} | {_borrow(q, plan)} | {_money(q.usd_per_hour)} |"
            for q in plan.quotas
        ]
        out += ["", "| account | $/h of nominal quota |", "|---|---:|"]
    else:
        out = [
            f"**Queues** · {_cell(summary(plan))}",
            "",
            "| queue | namespace | pool | GPU | nominal GPUs | borrow ≤ | lend ≤ | $/h |",
            "|---|---|---|---|---:|---:|---:|---:|",
        ]
        out += [
            f"| {q.queue} | {q.namespace} | {q.pool} | {q.gpu_model} | {q.gpus} | {_borrow(q, plan)} "
            f"| {_lend(q, plan)} | {_money(q.usd_per_hour)} |"
            for q in plan.quotas
        ]
        out += ["", "| queue | $/h of nominal quota |", "|---|---:|"]
    out += [f"| {k} | {_money(v)} |" for k, v in usd.items()]
    out += ["", "| pool | GPU | GPUs at max | promised | share | placement |", "|---|---|---:|---:|---:|---|"]
    out += [
        f"| {p.pool} | {p.gpu_model} | {p.capacity_gpus} | {p.promised_gpus} | "
        f"{'**' if p.overcommitted else ''}{p.share:.0%}{'**' if p.overcommitted else ''} | {_cell(p.placement)} |"
        for p in plan.pools
    ]
    if plan.access:
        out += ["", *(f"- tenancy: {_cell(line)}" for line in plan.access)]
    return out + [""]
