"""The GKE fabric of a stack, grouped once: per fabric kind (GPUDirect-TCPX, TCPXO, RDMA) its pools in spec order,
which of them GKE networks itself (``fabric.mode: managed``, by accelerator network profile) and which attach the
networks gpu-cluster creates or finds (the first such pool's fabric plan and zone define them), and one NCCL plugin
installer per CPU architecture. ``components/gke/fabric.py`` wires it; EFA is the EKS node group's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from catalog.fabric import FabricKind
from stacks.plan.fabric import FabricPlan
from stacks.plan.facts import PoolFacts


@dataclass(frozen=True)
class FabricKindPlan:
    kind: FabricKind
    pools: tuple[str, ...]
    """Every pool of this kind, in spec order."""
    managed: dict[str, str]
    """Pool -> its accelerator network profile: GKE creates and attaches the networks (nothing created here)."""
    attached: tuple[str, ...]
    """Pools whose nodes attach the networks below."""
    networks: FabricPlan | None
    """The first attached pool's fabric plan: the networks every attached pool of the kind shares (None: all managed)."""
    zone: str | None
    """The first attached pool's first zone (the RoCE network profile is per zone)."""
    installers: tuple[tuple[str, tuple[str, ...], int], ...]
    """(CPU architecture, pool names, RDMA NICs per node): one NCCL plugin installer DaemonSet each, in order of first
    appearance. The NIC count is the machine's (``catalog/data/fabrics.csv`` rdma_networks: 4 on A4X, 8 on A3 Ultra
    and A4): the installer's host steps name exactly those NICs."""


def _installers(members: Sequence[PoolFacts]) -> tuple[tuple[str, tuple[str, ...], int], ...]:
    def nics(p: PoolFacts) -> int:
        return p.fabric.machine.rdma_networks if p.fabric is not None else 0

    groups = dict.fromkeys((p.arch, nics(p)) for p in members)
    # one DaemonSet name per architecture: two NIC counts on one architecture would need a second name
    arches = [arch for arch, _ in groups]
    if len(arches) != len(set(arches)):
        raise ValueError(f"fabric pools of one architecture with different RDMA NIC counts: {sorted(groups)}")
    return tuple((arch, tuple(p.name for p in members if (p.arch, nics(p)) == (arch, n)), n) for arch, n in groups)


def gke_fabric_plan(facts: Sequence[PoolFacts]) -> tuple[FabricKindPlan, ...]:
    by_kind: dict[FabricKind, list[PoolFacts]] = {}
    for f in facts:
        if f.fabric is not None and f.fabric.kind != FabricKind.EFA:
            by_kind.setdefault(f.fabric.kind, []).append(f)
    out = []
    for kind, members in by_kind.items():
        attached = [p for p in members if p.fabric is not None and not p.fabric.managed]
        out.append(
            FabricKindPlan(
                kind=kind,
                pools=tuple(p.name for p in members),
                managed={
                    p.name: p.fabric.machine.gke_managed_profile
                    for p in members
                    if p.fabric is not None and p.fabric.managed
                },
                attached=tuple(p.name for p in attached),
                networks=attached[0].fabric if attached else None,
                zone=attached[0].zones[0] if attached else None,
                installers=_installers(members),
            )
        )
    return tuple(out)
