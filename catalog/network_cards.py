"""Per-network-card layout of EFA machines whose cards differ (``catalog/data/network-cards.csv``): which interface
type each card takes, at which device index, and which cards carry the EFA bandwidth. Machines without rows get
gpu-cluster's uniform layout (one EFA per card). Pure data; no Pulumi imports.

P6e-GB200 is the first such machine: of its 17 cards, card 0 is the ENA primary and the layout attaches EFA-only
interfaces on cards 1, 5, 9 and 13 (one per GPU's card pair, 4 x 400 Gbps: the EC2 user guide's recommendation);
cards without a row get no interface."""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from catalog.loader import DATA_DIR
from catalog.models import Cloud

INTERFACE_TYPES = ("interface", "efa", "efa-only")
EFA_TYPES = ("efa", "efa-only")
"""``interface`` is a plain ENA interface (no EFA device): P6e-GB200's card 0."""


@dataclass(frozen=True)
class NetworkCard:
    index: int
    max_interfaces: int
    efa_interface: str
    """``efa`` (EFA with ENA: takes a subnet IP), ``efa-only``, or ``interface`` (ENA only, no EFA device)."""
    device_index: int
    efa_gbps: int | None
    """The card's EFA bandwidth where a source gives it; None: not published."""
    source: str


@functools.cache
def load_network_cards() -> dict[tuple[Cloud, str], tuple[NetworkCard, ...]]:
    with open(DATA_DIR / "network-cards.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out: dict[tuple[Cloud, str], list[NetworkCard]] = {}
    for r in rows:
        if r["efa_interface"] not in INTERFACE_TYPES:
            raise ValueError(
                f"network-cards.csv: {r['machine_type']} card {r['card']}: interface "
                f"{r['efa_interface']!r} not in {INTERFACE_TYPES}"
            )
        out.setdefault((Cloud(r["cloud"]), r["machine_type"]), []).append(
            NetworkCard(
                index=int(r["card"]),
                max_interfaces=int(r["max_interfaces"]),
                efa_interface=r["efa_interface"],
                device_index=int(r["device_index"]),
                efa_gbps=int(r["efa_gbps"]) if r["efa_gbps"] else None,
                source=r["source"],
            )
        )
    return {k: tuple(sorted(v, key=lambda c: c.index)) for k, v in out.items()}


def network_cards(cloud: Cloud, machine_type: str) -> tuple[NetworkCard, ...] | None:
    return load_network_cards().get((cloud, machine_type))
