"""What a refresh changes in prices.csv: added, removed and changed prices, printed as a rich table."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from catalog.refresh.rows import PriceRow


@dataclass(frozen=True)
class Change:
    key: tuple[str, str, str, str]
    old: float | None
    new: float | None

    @property
    def kind(self) -> str:
        return "added" if self.old is None else "removed" if self.new is None else "changed"


def price_changes(old: list[PriceRow], new: list[PriceRow]) -> list[Change]:
    """Every (cloud, machine, region, capacity) whose price appears, disappears or moves by at least $0.000001."""
    before = {p.key: p.usd_per_hour for p in old}
    after = {p.key: p.usd_per_hour for p in new}
    keys = sorted(set(before) | set(after))
    return [
        Change(k, before.get(k), after.get(k))
        for k in keys
        if before.get(k) is None or after.get(k) is None or abs(before[k] - after[k]) >= 1e-6
    ]


def _usd(value: float | None) -> str:
    return "—" if value is None else f"${value:,.4f}"


def print_changes(console: Console, changes: list[Change], limit: int = 200) -> None:
    if not changes:
        console.print("prices.csv: no price changed")
        return
    table = Table(title=f"prices.csv: {len(changes)} change(s)")
    for column in ("cloud", "machine type", "region", "capacity", "old $/h", "new $/h", "change"):
        table.add_column(column, justify="right" if "$" in column else "left")
    for c in changes[:limit]:
        delta = "" if c.old is None or c.new is None else f"{(c.new - c.old) / c.old:+.1%}"
        table.add_row(*c.key, _usd(c.old), _usd(c.new), delta or c.kind)
    console.print(table)
    if len(changes) > limit:
        console.print(f"… and {len(changes) - limit} more (all are in the written file)")
