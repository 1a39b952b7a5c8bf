"""topology-efa-interfaces: multi-node p4d/p5/p5e/p5en/p6/p6e node groups attach every EFA interface the instance
type has, one per network card (per-card types and device indices where the catalog lays the cards out:
``catalog/data/network-cards.csv``)."""

from __future__ import annotations

from typing import Any, Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from policies.findings import Finding
from policies.links import launch_template_of
from policies.multinode import MIN_NODES_SCHEMA, efa_interfaces, is_multi_node
from policies.pools import gpu_pools
from policies.resources import EKS_NODE_GROUP, LAUNCH_TEMPLATE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import as_int
from catalog.cloud_limits import cloud_limit
from catalog.network_cards import EFA_TYPES
from stacks.plan.efa_layout import efa_layout

ID = "topology-efa-interfaces"
DEFAULT_PREFIXES = ["p4d.", "p4de.", "p5.", "p5e.", "p5en.", "p6-", "p6e-"]
ENA_CARD_LIMITS = {"p6e-gb200.36xlarge": "eks-p6e-gb200-network-card-0"}
"""Machines whose catalog layout has a plain ENA card, and the cloud-limits row that says why."""


def _fix(machine: Any) -> str:
    layout = efa_layout(machine)
    if not any(a.efa_gbps for a in layout):
        return (
            f"attach one EFA interface per network card: networkCardIndex 0–{len(layout) - 1}, deviceIndex 0 on "
            "card 0 and 1 on the others (gpu-cluster does this for multiNode: true pools)"
        )
    groups: dict[tuple[str, int], list[str]] = {}
    for a in layout:  # the ENA-only card too: the layout is the launch template's whole list
        groups.setdefault((a.interface_type, a.device_index), []).append(str(a.network_card_index))
    parts = "; ".join(
        f"{kind} at deviceIndex {dev} on cards {', '.join(cards)}" for (kind, dev), cards in groups.items()
    )
    return (
        f"attach one EFA interface per network card as catalog/data/network-cards.csv lays out "
        f"{machine.machine_type}: {parts} (gpu-cluster does this for multiNode: true pools)"
    )


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    prefixes = tuple(cfg["instanceTypePrefixes"])
    for view in gpu_pools(resources, cat):
        if view.cloud != Cloud.AWS:
            continue
        for instance_type in view.machine_types:
            machine = view.machine(cat, instance_type)
            if not instance_type.startswith(prefixes) or machine is None or not machine.efa_interfaces:
                continue  # no confirmed EFA count in the catalog: nothing to compare with
            template = launch_template_of(view.resource, view.name, resources)
            if not is_multi_node(view, machine, template, int(cfg["minNodes"])):
                continue
            want = machine.efa_interfaces
            efas = efa_interfaces(template)
            cards = sorted(c for c in (as_int(n.get("networkCardIndex", 0)) for n in efas) if isinstance(c, int))
            layout = efa_layout(machine)
            efa_cards = [a.network_card_index for a in layout if a.interface_type in EFA_TYPES]
            ena_only = sorted(set(cards) - set(efa_cards) & {a.network_card_index for a in layout})
            fix = _fix(machine)
            if template is not None and ena_only:
                row = ENA_CARD_LIMITS.get(instance_type)
                limit = cloud_limit(row) if row is not None else None
                yield Finding(
                    view.subject,
                    f"{instance_type} takes a plain ENA interface on network card "
                    f"{', '.join(map(str, ena_only))}, not EFA",
                    observed=f"EFA on card {', '.join(map(str, ena_only))} in launch template '{template.name}'",
                    required=(limit.cite() if limit is not None else "the catalog's layout"),
                    fix=fix,
                    keys=view.keys,
                    urn=view.resource.urn,
                )
            elif template is None:
                yield Finding(
                    view.subject,
                    f"multi-node {instance_type} pool has no EFA interfaces",
                    observed="no launch template",
                    required=f"{want} EFA interfaces, one per network card",
                    fix=fix,
                    keys=view.keys,
                    urn=view.resource.urn,
                )
            elif len(efas) != want:
                yield Finding(
                    view.subject,
                    f"multi-node {instance_type} pool leaves network cards without EFA, so "
                    f"NCCL traffic uses {len(efas)} of its {want} network cards",
                    observed=f"{len(efas)} EFA interface{'s' if len(efas) != 1 else ''} in launch template "
                    f"'{template.name}'",
                    required=_required(instance_type, want),
                    fix=fix,
                    keys=view.keys,
                    urn=view.resource.urn,
                )
            elif cards != (efa_cards if len(efa_cards) == want else list(range(want))):
                expected = efa_cards if len(efa_cards) == want else list(range(want))
                twice = sorted({c for c in cards if cards.count(c) > 1})
                missing = sorted(set(expected) - set(cards))
                yield Finding(
                    view.subject,
                    f"the {want} EFA interfaces of {instance_type} share network cards",
                    observed=f"networkCardIndex in launch template '{template.name}': cards {twice} have "
                    f"two interfaces, cards {missing} none",
                    required=f"cards {expected[0]}–{expected[-1]}, one interface each",
                    fix=fix,
                    keys=view.keys,
                    urn=view.resource.urn,
                )


def _required(instance_type: str, want: int) -> str:
    """P6e-GB200's count is AWS's documented layout (one EFA-only interface per GPU's card pair), not one per card."""
    if instance_type == "p6e-gb200.36xlarge":
        return f"{want} EFA interfaces: {cloud_limit('eks-p6e-gb200-efa-layout').cite()}"
    return f"{want} EFA interfaces, one per network card"


RULE = register(
    Rule(
        id=ID,
        title="Multi-node EFA pools have every EFA interface",
        category=Category.TOPOLOGY,
        description="Multi-node p4d/p5/p5e/p5en/p6/p6e node groups attach one EFA interface per network card of the "
        "instance type.",
        why=(
            "A p5.48xlarge has 32 network cards and 3,200 Gbps of EFA only when every card carries an EFA "
            "interface; with one interface NCCL runs at a fraction of the fabric and multi-node jobs slow down "
            "without any error. The count per instance type comes from the catalog."
        ),
        remediation=(
            "1. For a gpu-cluster stack, set multiNode: true on the pool: the component writes one EFA "
            "interface per network card. 2. Otherwise add launch-template network interfaces with "
            "interfaceType efa, networkCardIndex 0..N-1 (deviceIndex 0 on card 0, 1 on the rest) and the "
            "EFA security group; where the catalog lays out the cards (P6e-GB200: efa-only at deviceIndex 0 "
            "on the odd 400 Gbps cards, efa at deviceIndex 1 on the even ones, card 0 a plain ENA interface), "
            "follow "
            "catalog/data/network-cards.csv."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(EKS_NODE_GROUP, LAUNCH_TEMPLATE),
        check=check,
        reads_catalog=True,
        stack=True,
        config={
            "instanceTypePrefixes": {
                "type": "array",
                "items": {"type": "string"},
                "default": DEFAULT_PREFIXES,
                "description": "Instance types (by prefix) whose EFA count is enforced.",
            },
            "minNodes": MIN_NODES_SCHEMA,
        },
    ),
    order=2030,
)
