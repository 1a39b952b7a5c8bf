"""The maintenance line of the text preview: when GKE may upgrade the cluster, and the exclusions."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text


def print_maintenance(console: Console, m: dict[str, Any]) -> None:
    if m["window"]:
        note = " (default for clusters with multi-node or reservation pools)" if m["default"] else ""
        console.print(Text.assemble(("GKE maintenance window: ", "bold"), m["window"], (note, "dim")))
    for e in m["exclusions"]:
        console.print(Text(f"  exclusion {e['name']}: {e['start']} to {e['end']}, {e['scope']}"))
