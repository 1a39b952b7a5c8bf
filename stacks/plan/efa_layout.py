"""Which EFA interface an EKS GPU node gets on each network card: the launch template's ``network_interfaces``. Pure.

By default one EFA per card: card 0 is the primary interface (device 0, ``efa``: EFA + ENA, it takes the node's
subnet IP), the rest are device 1 and ``efa-only`` (no IP address: a 96-node p5en group would otherwise burn ~1,500
subnet IPs on GPU-traffic NICs that never use IP; AWS EFA user guide, "EFA-only interfaces"). Machines whose cards
differ follow ``catalog/data/network-cards.csv``: on P6e-GB200 card 0 is a plain ENA ``interface`` (the EKS P6e
guide: card 0 "must be of type interface") and cards 1, 5, 9 and 13 take one ``efa-only`` interface at device 0,
one per GPU's card pair (4 x 400 Gbps = 1,600 Gbps: the EC2 user guide's recommended layout, and the 4 EFA devices
the EKS guide expects); the other cards share those physical NICs and get nothing."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.models import MachineType
from catalog.network_cards import EFA_TYPES, network_cards

UNCONFIRMED_EFA_INTERFACES = 1
"""A machine whose EFA count no source confirms gets one (the primary)."""


@dataclass(frozen=True)
class EfaAttachment:
    network_card_index: int
    device_index: int
    interface_type: str
    efa_gbps: int | None = None
    """The card's EFA bandwidth where the catalog has it."""


def efa_layout(machine: MachineType) -> tuple[EfaAttachment, ...]:
    cards = network_cards(machine.cloud, machine.machine_type)
    if cards:
        return tuple(EfaAttachment(c.index, c.device_index, c.efa_interface, c.efa_gbps) for c in cards)
    count = machine.efa_interfaces or UNCONFIRMED_EFA_INTERFACES
    return tuple(EfaAttachment(i, 0 if i == 0 else 1, "efa" if i == 0 else "efa-only") for i in range(count))


def efa_count(layout: tuple[EfaAttachment, ...]) -> int:
    """EFA devices the layout gives a node (a plain ENA ``interface`` carries none)."""
    return sum(a.interface_type in EFA_TYPES for a in layout)


def efa_summary(layout: tuple[EfaAttachment, ...]) -> str:
    """``4 EFA interfaces (4 x 400 Gbps links on cards 1, 5, 9, 13); card 0 ENA only``: the preview's account."""
    fast = [a for a in layout if a.efa_gbps]
    count = efa_count(layout)
    ena = [a.network_card_index for a in layout if a.interface_type not in EFA_TYPES]
    tail = f"; card {', '.join(map(str, ena))} ENA only" if ena else ""
    if not fast:
        return f"{count} EFA interface{'s' if count != 1 else ''}{tail}"
    speeds = sorted({a.efa_gbps for a in fast if a.efa_gbps})
    cards = ", ".join(str(a.network_card_index) for a in fast)
    # line rates only: the instance's EFA bandwidth is the fabric catalog's (on P6e the 4 links' sum, 1,600 Gbps)
    return f"{count} EFA interfaces ({len(fast)} x {'/'.join(map(str, speeds))} Gbps links on cards {cards}){tail}"
