"""Could Kueue's topology-aware scheduling ever place a gang on a rack-scale pool's nodes? Pure, no Pulumi.

The flavor assigner (``stacks/plan/admission.py``) decides whether a PodSet may use a flavor; where the pods go
inside it is TAS's placement, which it does not model. This module answers the one question a topology request can
make hopeless: is there a domain of the required level that holds the whole PodSet, and inside it enough domains of
the slice level for every slice? Semantics from the Kueue v0.19.2 TAS concept page (``../shared/upstream/
kueue-v0.19.2/site/content/en/docs/concepts/topology_aware_scheduling.md``): ``podset-required-topology`` puts all
pods in one domain of the level; ``podset-slice-required-topology`` with ``podset-slice-size`` puts each group of
that many pods in one domain of the slice level; preferred and unconstrained requests fall back to the whole flavor.
Capacity is an empty cluster (every node free): a gang that does not fit here never fits.

The nodes are those the cloud gives the pool, labelled by structure (values stand for "same domain"): on GKE each
rack node pool of a ``1x72`` workload policy is one sub-block (GKE A4X guide), and the racks share one block only
when the pool targets one reservation block (``capacity.reservationBlock``); without it each rack may land in a
block of its own, so they are modelled apart (the case that can fail). On EKS one UltraServer is one
``nvidia.com/gpu.clique``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from catalog import Cloud
from stacks.plan.facts import PoolFacts
from stacks.plan.kueue_topology import (
    HOSTNAME_LABEL,
    REQUIRED_ANNOTATION,
    SLICE_SIZE_ANNOTATION,
    SLICE_TOPOLOGY_ANNOTATION,
    ZONE_LABEL,
)


@dataclass(frozen=True)
class TopologyAsk:
    required: str | None
    slice_level: str | None = None
    slice_size: int = 1


def ask_of(annotations: Mapping[str, str]) -> TopologyAsk:
    """The PodSet's topology request from its pod template annotations."""
    size = annotations.get(SLICE_SIZE_ANNOTATION)
    return TopologyAsk(
        annotations.get(REQUIRED_ANNOTATION), annotations.get(SLICE_TOPOLOGY_ANNOTATION), int(size) if size else 1
    )


def pool_nodes(pool: PoolFacts, levels: Sequence[str]) -> list[dict[str, str]]:
    """The pool's nodes at full size with a label for each level of its Topology (``levels``)."""
    nv = pool.nvlink
    if nv is None:
        raise ValueError(f"pool {pool.name}: not a rack-scale NVLink pool")
    per_domain = nv.domain_nodes
    nodes = []
    for i in range(pool.max_nodes):
        rack = i // per_domain
        shared_block = pool.cloud != Cloud.GCP or nv.reservation_block is not None
        block = "block-0" if shared_block else f"block-of-rack-{rack}"
        labels = {}
        for level in levels:
            if level == HOSTNAME_LABEL:
                labels[level] = f"{pool.name}-node-{i}"
            elif level == ZONE_LABEL:
                labels[level] = pool.zones[0] if pool.zones else "zone"
            elif level == nv.domain_label:
                labels[level] = f"rack-{rack}"
            elif level == nv.block_label:
                labels[level] = block
            else:  # levels above the block (or the node pool): one value per rack's block
                labels[level] = block
        nodes.append(labels)
    return nodes


def placement_problem(
    levels: Sequence[str], nodes: Sequence[Mapping[str, str]], pods_per_node: int, pods: int, ask: TopologyAsk
) -> str | None:
    """None when TAS can place ``pods`` pods on these nodes under ``ask``; else why not, in a sentence."""
    for level in (ask.required, ask.slice_level):
        if level is not None and level not in levels:
            return f"the Topology has no level {level} (levels: {', '.join(levels)})"
    if ask.slice_level is not None and pods % ask.slice_size:
        return f"{pods} pods do not split into slices of {ask.slice_size}"
    groups: dict[str, list[Mapping[str, str]]] = {}
    for node in nodes:
        groups.setdefault(node[ask.required] if ask.required else "", []).append(node)
    best = 0
    for members in groups.values():
        if ask.slice_level is None:
            fits = len(members) * pods_per_node
        else:
            inner: dict[str, int] = {}
            for node in members:
                inner[node[ask.slice_level]] = inner.get(node[ask.slice_level], 0) + pods_per_node
            fits = sum(c // ask.slice_size for c in inner.values()) * ask.slice_size
        if fits >= pods:
            return None
        best = max(best, fits)
    where = f"one {ask.required} domain" if ask.required else "the pool"
    slices = f" in slices of {ask.slice_size} per {ask.slice_level}" if ask.slice_level else ""
    return f"{where} holds at most {best} pods{slices}, fewer than the gang's {pods}"
