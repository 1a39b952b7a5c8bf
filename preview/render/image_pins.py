"""The "Host-level images" lines of the text preview: how each privileged or host-level container's image is pinned
(``preview/policy/image_pins.py``)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text


def print_host_images(console: Console, rows: list[dict[str, Any]]) -> None:
    at_deploy = sum(r["resolvedAtDeploy"] for r in rows)
    tag_only = sum(r["pin"] == "tag only" for r in rows)
    console.print(
        Text.assemble(
            ("Host-level images", "bold"),
            f" (privileged or host access): {len(rows)}, "
            f"{len(rows) - tag_only} by digest ({at_deploy} resolved at deploy), "
            f"{tag_only} by tag only",
        )
    )
    for r in rows:
        pin = f"digest {r['digest']}" if r["digest"] else r["pin"]
        style = "red" if r["pin"] == "tag only" else None
        where = ", ".join(r["containers"][:3]) + (f" +{len(r['containers']) - 3}" if len(r["containers"]) > 3 else "")
        console.print(Text(f"  {r['image']}: {pin} ({where})", style=style or ""), highlight=False)
