"""The scheduling section in text (rich) and Markdown: quota per queue, pool and GPU model, borrowing and lending,
the share of each pool's capacity that is promised, and $/hour of each team's nominal quota."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from scheduling.quota_plan import QueueQuota, QuotaPlan


def _borrow(q: QueueQuota, plan: QuotaPlan) -> str:
    if plan.cohort is None:
        return "-"
    return "no limit" if q.borrowing_limit is None else str(q.borrowing_limit)


def _lend(q: QueueQuota, plan: QuotaPlan) -> str:
    if plan.cohort is None:
        return "-"
    return "all unused" if q.lending_limit is None else str(q.lending_limit)


def summary(plan: QuotaPlan) -> str:
    gang = f"gang admission: all pods ready within {plan.gang_timeout_seconds} s" \
        if plan.gang_timeout_seconds is not None else "gang admission: off"
    cohort = f"cohort {plan.cohort} (borrowing, lending, fair sharing)" if plan.cohort else "no cohort (no borrowing)"
    over = " · overcommit allowed" if plan.overcommit else ""
    return f"workload {plan.workload} · {cohort} · {plan.queueing_strategy} · {gang}{over}"


def print_queues(console: Console, plan: QuotaPlan) -> None:
    console.print(queue_table(plan))
    console.print(Text(summary(plan), style="dim"))
    console.print()
    console.print(pool_table(plan))


def queue_table(plan: QuotaPlan) -> Table:
    usd = plan.queue_usd_per_hour()
    table = Table(title="Queues (GPU quota per pool; $/h = nominal GPUs × the pool's $/GPU-h)", title_justify="left",
                  header_style="bold")
    for name, justify in (("queue", "left"), ("namespace", "left"), ("pool", "left"), ("GPU", "left"),
                          ("nominal GPUs", "right"), ("borrow ≤", "right"), ("lend ≤", "right"), ("$/h", "right"),
                          ("queue $/h", "right")):
        table.add_column(name, justify=justify, no_wrap=True)
    shown: set[str] = set()
    for q in plan.quotas:
        first = q.queue not in shown
        shown.add(q.queue)
        table.add_row(q.queue if first else "", q.namespace if first else "", q.pool, q.gpu_model, str(q.gpus),
                      _borrow(q, plan), _lend(q, plan), f"{q.usd_per_hour:,.2f}", f"{usd[q.queue]:,.2f}" if first else "")
    return table


def pool_table(plan: QuotaPlan) -> Table:
    table = Table(title="Promised capacity per pool", title_justify="left", header_style="bold")
    for name, justify in (("pool", "left"), ("GPU", "left"), ("GPUs at max", "right"), ("promised", "right"),
                          ("share", "right"), ("placement", "left")):
        table.add_column(name, justify=justify, no_wrap=name != "placement")
    for p in plan.pools:
        share = Text(f"{p.share:.0%}", style="bold red" if p.overcommitted else "")
        table.add_row(p.pool, p.gpu_model, str(p.capacity_gpus), str(p.promised_gpus), share, p.placement)
    return table


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|")


def markdown_queues(plan: QuotaPlan | None) -> list[str]:
    if plan is None:
        return []
    usd = plan.queue_usd_per_hour()
    out = [f"**Queues** · {_cell(summary(plan))}", "",
           "| queue | namespace | pool | GPU | nominal GPUs | borrow ≤ | lend ≤ | $/h |", "|---|---|---|---|---:|---:|---:|---:|"]
    out += [f"| {q.queue} | {q.namespace} | {q.pool} | {q.gpu_model} | {q.gpus} | {_borrow(q, plan)} | {_lend(q, plan)} "
            f"| {q.usd_per_hour:,.2f} |" for q in plan.quotas]
    out += ["", "| queue | $/h of nominal quota |", "|---|---:|"] + [f"| {k} | {v:,.2f} |" for k, v in usd.items()]
    out += ["", "| pool | GPU | GPUs at max | promised | share | placement |", "|---|---|---:|---:|---:|---|"]
    out += [f"| {p.pool} | {p.gpu_model} | {p.capacity_gpus} | {p.promised_gpus} | "
            f"{'**' if p.overcommitted else ''}{p.share:.0%}{'**' if p.overcommitted else ''} | {_cell(p.placement)} |"
            for p in plan.pools]
    return out + [""]
