"""Which topology labels each cloud really puts on GPU nodes, and how a pool's placement is expressed to Kueue TAS.

Pure data and functions (no Pulumi). Facts and their sources:

- Both clouds set the well-known ``topology.kubernetes.io/zone`` and ``kubernetes.io/hostname`` on every node.
- GKE labels nodes with ``cloud.google.com/gce-topology-block``, ``…-subblock`` and ``…-host`` on machine types whose
  physical topology Compute Engine exposes: A4X, A4, A3 Ultra, A3 Mega and A3 High with 8 GPUs (Compute Engine
  "View instance topology", limitations; AI Hypercomputer "Schedule GKE workloads with Topology Aware Scheduling").
- EKS labels nodes with ``topology.k8s.aws/network-node-layer-1`` (top of the network hierarchy) to ``…-layer-3``
  (the network node closest to the instance) on instance types that EC2 instance topology supports (EKS user guide
  "Place distributed AI/ML workloads with network topology labels"; EC2 "Prerequisites for Amazon EC2 topology").
- Kueue TAS assumes every node of a TAS flavor carries a label for every level of its Topology (Kueue "Topology Aware
  Scheduling" concept page), and computes free capacity from nodes that exist and are Ready. A pool that must scale up
  before a job fits would therefore never get that job admitted: TAS is used for pools of fixed size, and for
  queued-provisioning pools, whose ProvisioningRequest AdmissionCheck makes Kueue assign the topology after the nodes
  are provisioned, "taking into account any newly provisioned nodes" (same page, "ClusterAutoscaler support").
- GKE refuses compact placement on queued-provisioning GPU pools, and without it Compute Engine omits the topology
  labels of A3 High and A3 Mega nodes; A3 Ultra and A4 nodes get them anyway (cluster-toolkit
  docs/gke-consumption-options.md). A queued A3 High/Mega pool is therefore placed by zone and host only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from catalog import Cloud
from stacks.plan.facts import PoolFacts
from stacks.spec.scheduling import Queue, SchedulingSpec

ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"

CLOUD_LEVELS: dict[Cloud, tuple[str, ...]] = {
    Cloud.GCP: (
        ZONE_LABEL,
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        HOSTNAME_LABEL,
    ),
    Cloud.AWS: (
        ZONE_LABEL,
        "topology.k8s.aws/network-node-layer-1",
        "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3",
        HOSTNAME_LABEL,
    ),
}
"""Topology levels, broadest first, ``kubernetes.io/hostname`` last (Kueue allows it only as the lowest level)."""

BASIC_LEVELS: tuple[str, ...] = (ZONE_LABEL, HOSTNAME_LABEL)
"""Levels every node has: used for fixed-size pools on machine types without block labels."""

BLOCK_LABEL: dict[Cloud, str] = {
    Cloud.GCP: "cloud.google.com/gce-topology-block",
    Cloud.AWS: "topology.k8s.aws/network-node-layer-2",
}
"""What ``level: block`` means per cloud: a GKE block; on EKS the middle network layer (a GKE block's scope)."""

CLIQUE_LABEL = "nvidia.com/gpu.clique"
"""GPU Feature Discovery's label: nodes with the same value share one NVLink (MNNVL) domain."""
CLIQUE_LEVELS: tuple[str, ...] = (ZONE_LABEL, CLIQUE_LABEL, HOSTNAME_LABEL)
"""EKS rack-scale pools: AWS labels no UltraServer on plain EKS, so the NVLink domain is GFD's clique."""
CLIQUE_TOPOLOGY_NAME = "nvlink-clique"

TOPOLOGY_NAMES = {Cloud.GCP: "gke-network", Cloud.AWS: "eks-network"}
BASIC_TOPOLOGY_NAME = "zone-host"

_BLOCK_LABELLED: dict[Cloud, tuple[str, ...]] = {
    Cloud.GCP: ("a4x-", "a4-", "a3-ultragpu-", "a3-megagpu-", "a3-highgpu-8g"),
    Cloud.AWS: (
        "p3dn.24xlarge",
        "p4d.24xlarge",
        "p4de.24xlarge",
        "p5.48xlarge",
        "p5e.48xlarge",
        "p5en.48xlarge",
        "p6-b200.48xlarge",
        "g6e.",
        "g7e.",
    ),
}
"""Machine types (exact, or a prefix ending in '-' or '.') whose nodes the cloud labels with block topology."""
_GKE_LABELLED_WITHOUT_COMPACT = ("a4x-", "a4-", "a3-ultragpu-")
"""GKE types whose nodes carry block labels without compact placement (so also on queued-provisioning pools)."""

REQUIRED_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
SLICE_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE_ANNOTATION = "kueue.x-k8s.io/podset-slice-size"
"""Kueue TAS slices (v0.19.2 Workload API ``podSetSliceRequiredTopology``/``podSetSliceSize``; the TAS concept page):
the PodSet's pods in groups of the slice size, each group inside one domain of the slice level, the whole PodSet
inside one domain of its required level."""


def _matches(machine_type: str, patterns: tuple[str, ...]) -> bool:
    return any(machine_type == p or (p[-1] in "-." and machine_type.startswith(p)) for p in patterns)


def has_block_labels(cloud: Cloud, machine_type: str, queued: bool = False) -> bool:
    """True when the cloud puts block-level topology labels on nodes of this machine type (on a GKE queued pool,
    which has no compact placement, only where GKE labels nodes without it)."""
    if queued and cloud == Cloud.GCP:
        return _matches(machine_type, _GKE_LABELLED_WITHOUT_COMPACT)
    return _matches(machine_type, _BLOCK_LABELLED[cloud])


def is_fixed_size(min_nodes: int, max_nodes: int) -> bool:
    """Kueue TAS counts only existing nodes, so without queued provisioning it is used only where every node always
    exists."""
    return min_nodes == max_nodes


def tas_capable(min_nodes: int, max_nodes: int, queued: bool) -> bool:
    """Kueue TAS can place gangs on the pool: every node always exists, or a ProvisioningRequest AdmissionCheck
    provisions them before the topology is assigned."""
    return queued or is_fixed_size(min_nodes, max_nodes)


def level_label(cloud: Cloud, level: str, blocks: bool) -> str | None:
    """Node label of a spec level (``host``/``block``/``zone``) on a pool; None when the pool lacks that level."""
    if level == "host":
        return HOSTNAME_LABEL
    if level == "zone":
        return ZONE_LABEL
    return BLOCK_LABEL[cloud] if blocks else None


@dataclass(frozen=True)
class Placement:
    """How one pool's gangs are placed: a TAS topology and the annotation a runtime puts on its pods, or none."""

    pool: str
    topology: str | None
    """Name of the Kueue Topology the pool's ResourceFlavor references; None: no topology-aware scheduling."""
    levels: tuple[str, ...] = ()
    annotation: tuple[str, str] | None = None
    """(annotation key, node label) for pod templates of this pool, e.g. (preferred-topology, gce-topology-block)."""
    note: str = ""
    """Why, in a few words, for the preview."""


def placement(
    cloud: Cloud,
    pool: str,
    machine_type: str,
    min_nodes: int,
    max_nodes: int,
    mode: str,
    level: str,
    queued: bool = False,
    nvlink_label: str | None = None,
) -> Placement:
    """Placement of one pool under ``topology: {mode, level}`` (validation rejects the unsatisfiable cases).
    ``nvlink_label``: on a rack-scale NVLink pool, the node label naming its domain (``level: nvlink``)."""
    if mode == "none":
        return Placement(pool, None, note="topology-aware placement is off (topology.mode: none)")
    if not tas_capable(min_nodes, max_nodes, queued):
        return Placement(
            pool,
            None,
            note=f"autoscaled ({min_nodes}-{max_nodes} nodes): Kueue TAS only counts "
            "existing nodes, so gangs are admitted by quota alone",
        )
    blocks = has_block_labels(cloud, machine_type, queued)
    name, levels = (TOPOLOGY_NAMES[cloud], CLOUD_LEVELS[cloud]) if blocks else (BASIC_TOPOLOGY_NAME, BASIC_LEVELS)
    if nvlink_label is not None and nvlink_label not in levels:  # EKS GB200: GFD's clique is the domain level
        name, levels = CLIQUE_TOPOLOGY_NAME, CLIQUE_LEVELS
    if level == "nvlink":
        if nvlink_label is None:
            raise ValueError(f"pool {pool}: nvlink placement on {machine_type}, which has no rack-scale NVLink domain")
        key = REQUIRED_ANNOTATION if mode == "required" else PREFERRED_ANNOTATION
        return Placement(pool, name, levels, (key, nvlink_label), f"{mode} nvlink (one NVLink domain per gang)")
    label = level_label(cloud, level, blocks)
    note = f"{mode} {level}"
    if label is None:
        if mode == "required":
            raise ValueError(f"pool {pool}: required block placement on {machine_type}, which has no block labels")
        label, note = ZONE_LABEL, f"preferred zone ({machine_type} nodes carry no block labels)"
    key = REQUIRED_ANNOTATION if mode == "required" else PREFERRED_ANNOTATION
    if queued and not is_fixed_size(min_nodes, max_nodes):
        note += " on nodes provisioned per workload (ProvisioningRequest)"
    return Placement(pool, name, levels, (key, label), note)


def spanning_annotations(pool: PoolFacts, where: Placement | None) -> dict[str, str] | None:
    """Pod annotations of a second runtime for gangs of whole racks, or None. A GKE pool of several racks whose gangs
    are required inside one NVLink domain (one rack = one GKE sub-block) can never admit a gang of two racks, so its
    racks' gangs get a runtime required at the block above (all rack pools come from one reservation block), in
    slices of one rack each inside a sub-block: NVLink (IMEX) inside each rack, the RDMA network between them.
    Kueue allows one of required/preferred per PodSet, so "inside a block, each rack whole" is written as required
    block + slice required at the sub-block, not as required block + preferred sub-block."""
    nv = pool.nvlink
    if nv is None or nv.racks < 2 or not nv.block_label or where is None:
        return None
    if where.annotation != (REQUIRED_ANNOTATION, nv.domain_label) or nv.block_label not in where.levels:
        return None  # preferred already falls back to the block; no TAS or no block level: nothing to span with
    return {
        REQUIRED_ANNOTATION: nv.block_label,
        SLICE_TOPOLOGY_ANNOTATION: nv.domain_label,
        SLICE_SIZE_ANNOTATION: str(nv.domain_nodes),
    }


def pool_placements(spec: SchedulingSpec, pools: Sequence[PoolFacts]) -> dict[str, Placement]:
    """Pool name -> how its gangs are placed under ``scheduling.topology`` (pools no queue uses get no topology)."""
    used = {q.pool for queue in spec.queues for q in queue.quotas}
    return {
        p.name: placement(
            p.cloud,
            p.name,
            p.machine.machine_type,
            p.min_nodes,
            p.max_nodes,
            spec.topology.mode.value,
            spec.topology.level.value,
            p.queued is not None,
            p.nvlink.domain_label if p.nvlink is not None else None,
        )
        if p.name in used
        else Placement(p.name, None, note="no queue has quota in this pool")
        for p in pools
    }


def namespace_of(queue: Queue) -> str:
    return queue.namespace or queue.name


def pool_namespaces(spec: SchedulingSpec) -> dict[str, list[str]]:
    """Pool name -> the team namespaces whose queues have quota on it (where its jobs run), in spec order."""
    out: dict[str, list[str]] = {}
    for queue in spec.queues:
        for quota in queue.quotas:
            names = out.setdefault(quota.pool, [])
            if namespace_of(queue) not in names:
                names.append(namespace_of(queue))
    return out
