"""cross-layer-kueue-topology: every level of a Kueue Topology is a node label the stack's cloud really sets (or a
node pool adds), broadest first with ``kubernetes.io/hostname`` last, and every Topology a ResourceFlavor names
exists. The cloud is decided by the node pool resources of the stack (GKE node pools or EKS node groups)."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from policies.findings import Finding, listing
from policies.pools import pool_view
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL, HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import kueue_kind, object_name, selected_pool
from policies.values import as_dict, as_list, dig
from stacks.plan.kueue_topology import CLIQUE_LABEL, CLOUD_LEVELS, HOSTNAME_LABEL

ID = "cross-layer-kueue-topology"
CLOUD_OF_POOL = {GKE_NODE_POOL: Cloud.GCP, EKS_NODE_GROUP: Cloud.AWS}
CLOUD_NAME = {Cloud.GCP: "GKE", Cloud.AWS: "EKS"}
ARTICLE = {Cloud.GCP: "a", Cloud.AWS: "an"}
_COMMON = set(CLOUD_LEVELS[Cloud.GCP]) & set(CLOUD_LEVELS[Cloud.AWS])
ONLY = {c: tuple(label for label in levels if label not in _COMMON) for c, levels in CLOUD_LEVELS.items()}
"""Labels one cloud sets and the other never does."""


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    clouds = {CLOUD_OF_POOL[r.type] for r in resources if r.type in CLOUD_OF_POOL}
    cloud = next(iter(clouds)) if len(clouds) == 1 else None
    added = {str(k) for r in resources for v in [pool_view(r, cat)] if v is not None for k in v.labels}
    added |= {str(k) for k in as_list(cfg.get("extraLabels"))}
    if any(_runs_gfd(r) for r in resources):  # GPU Feature Discovery labels each GPU node's NVLink clique
        added.add(CLIQUE_LABEL)
    topologies = {object_name(r): r for r in resources if kueue_kind(r) == "Topology"}
    flavors = [r for r in resources if kueue_kind(r) == "ResourceFlavor"]
    users: dict[str, list[str]] = {}
    for f in flavors:
        pool = selected_pool(as_dict(dig(f.props, "spec", "nodeLabels")))
        users.setdefault(str(dig(f.props, "spec", "topologyName")), []).append(pool or object_name(f))
    for name, r in topologies.items():
        yield from _check_topology(name, r, cloud, added, sorted(users.get(name, [])))
    for f in flavors:
        wanted = dig(f.props, "spec", "topologyName")
        if isinstance(wanted, str) and wanted not in topologies:
            flavor = object_name(f)
            pool = selected_pool(as_dict(dig(f.props, "spec", "nodeLabels")))
            yield Finding(
                f"Kueue ResourceFlavor '{flavor}'",
                "its topology is not in this stack, so Kueue keeps the "
                "ClusterQueues that use this flavor inactive and admits nothing"
                + (f" to pool '{pool}'" if pool else ""),
                observed=f"spec.topologyName {wanted}",
                required=f"a Topology of this stack: {listing(sorted(topologies))}"
                if topologies
                else "a Kueue Topology in this stack (it creates none)",
                fix="set spec.topologyName to a Topology of the stack (gpu-cluster renders the flavor and "
                f"its Topology together: re-render both), or waive {ID} for this flavor if another "
                "stack creates the Topology",
                keys=tuple(k for k in (flavor, pool, f.name, f.urn) if k),
                urn=f.urn,
            )


def _runs_gfd(r: Resource) -> bool:
    """The NVIDIA device plugin chart with GPU Feature Discovery on, or the GPU Operator (which runs GFD)."""
    chart = str(r.props.get("chart", "")).rstrip("/").rsplit("/", 1)[-1]
    return r.type == HELM_RELEASE and (
        chart == "gpu-operator"
        or (chart == "nvidia-device-plugin" and dig(r.props, "values", "gfd", "enabled") is True)
    )


def _check_topology(
    name: str, r: Resource, cloud: Cloud | None, added: set[str], pools: list[str]
) -> Iterable[Finding]:
    levels = [as_dict(level).get("nodeLabel") for level in as_list(dig(r.props, "spec", "levels"))]
    subject = f"Kueue Topology '{name}'"
    keys = (name, *pools, r.name, r.urn)
    where = listing(f"pool '{p}'" for p in pools)
    unseen = (
        f"so topology-aware scheduling finds no node{' of ' + where if pools else ''} with that label and gangs "
        "stay Pending"
    )
    own = CLOUD_LEVELS[cloud] if cloud else tuple(dict.fromkeys(CLOUD_LEVELS[Cloud.GCP] + CLOUD_LEVELS[Cloud.AWS]))
    allowed = (f"{CLOUD_NAME[cloud]} node labels: " if cloud else "node labels GKE or EKS set: ") + ", ".join(own)
    for i, label in enumerate(levels):
        if not isinstance(label, str) or label in added:
            continue
        other = next((c for c in ONLY if c != cloud and label in ONLY[c]), None) if cloud else None
        if other is not None and cloud is not None:  # other is only set when the stack's cloud is known
            yield Finding(
                subject,
                f"a level uses {ARTICLE[other]} {CLOUD_NAME[other]} label, but this stack's node "
                f"pools are {CLOUD_NAME[cloud]} ones, {unseen}",
                observed=f"spec.levels[{i}].nodeLabel {label}",
                required=allowed,
                fix=f"use the {CLOUD_NAME[cloud]} labels in spec.levels (gpu-cluster renders them for the "
                "stack's cloud)",
                keys=keys,
                urn=r.urn,
            )
        elif label not in own:
            yield Finding(
                subject,
                "a level uses a label "
                f"{CLOUD_NAME[cloud] + ' never sets' if cloud else 'neither GKE nor EKS sets'} and no node "
                f"pool of this stack adds, {unseen}",
                observed=f"spec.levels[{i}].nodeLabel {label}",
                required=allowed,
                fix=f"use one of those labels in spec.levels[{i}], or add the label to extraLabels of {ID} "
                "if your nodes get it from elsewhere",
                keys=keys,
                urn=r.urn,
            )
    if cloud is None:
        mixed = [c for c in ONLY if any(label in ONLY[c] for label in levels)]
        if len(mixed) > 1:
            yield Finding(
                subject,
                f"spec.levels mix GKE and EKS labels, and no node carries both, {unseen}",
                observed="GKE labels "
                + listing(x for x in levels if x in ONLY[Cloud.GCP])
                + "; EKS labels "
                + listing(x for x in levels if x in ONLY[Cloud.AWS]),
                required="the labels of one cloud",
                fix="keep the labels of the cloud the pools run on",
                keys=keys,
                urn=r.urn,
            )
            return
        order = CLOUD_LEVELS[mixed[0]] if mixed else CLOUD_LEVELS[Cloud.GCP]
    else:
        order = CLOUD_LEVELS[cloud]
    if HOSTNAME_LABEL in levels and levels.index(HOSTNAME_LABEL) != len(levels) - 1:
        yield Finding(
            subject,
            f"{HOSTNAME_LABEL} is not the last level, so the API server refuses this Topology"
            + (f" and nothing is admitted to {where}" if pools else ""),
            observed=f"{HOSTNAME_LABEL} is spec.levels[{levels.index(HOSTNAME_LABEL)}] of {len(levels)}",
            required=f"{HOSTNAME_LABEL} last (Kueue accepts it only there)",
            fix=f"move {HOSTNAME_LABEL} to the end of spec.levels",
            keys=keys,
            urn=r.urn,
        )
        return
    known = [(i, label) for i, label in enumerate(levels) if label in order]
    for (_, upper), (i, lower) in zip(known, known[1:]):
        if order.index(lower) < order.index(upper):
            yield Finding(
                subject,
                "a level is broader than the level above it, so Kueue nests the domains the wrong "
                "way round and spreads gangs over nodes it should keep together",
                observed=f"spec.levels[{i}] {lower} under {upper}",
                required="levels broadest first: " + ", ".join(order),
                fix="reorder spec.levels broadest first (gpu-cluster renders them in that order)",
                keys=keys,
                urn=r.urn,
            )
            return


RULE = register(
    Rule(
        id=ID,
        title="Kueue topologies use labels the cloud sets",
        category=Category.CROSS_LAYER,
        description="Each Kueue Topology level is a node label the stack's cloud sets, broadest first with "
        "kubernetes.io/hostname last, and each Topology a ResourceFlavor names exists.",
        why=(
            "Kueue's topology-aware scheduling groups nodes by the labels of the Topology levels and only counts nodes "
            "that carry them: a misspelt label, or an EKS label (topology.k8s.aws/network-node-layer-N) on GKE nodes "
            "(which carry cloud.google.com/gce-topology-block, -subblock and -host) or the reverse, leaves every gang "
            "of the flavor Pending with quota to spare and no error at deploy time. Levels must go broadest first, and "
            "Kueue accepts kubernetes.io/hostname only as the last one. A flavor whose spec.topologyName names no "
            "Topology makes Kueue deactivate the ClusterQueues that use it. The cloud is read from the stack's node "
            "pool resources; labels a node pool sets itself are accepted too."
        ),
        remediation=(
            "1. Use the labels the cloud sets: topology.kubernetes.io/zone; on GKE "
            "cloud.google.com/gce-topology-block, -subblock, -host; on EKS "
            "topology.k8s.aws/network-node-layer-1, -2, -3; kubernetes.io/hostname last. 2. Keep the levels "
            "broadest first. 3. Point the flavor's spec.topologyName at a Topology of the stack (gpu-cluster "
            "renders both from the pool's machine type). 4. Labels your nodes get from elsewhere (a labelling "
            "DaemonSet) go in extraLabels."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(
            "kubernetes:kueue.x-k8s.io/*:Topology",
            "kubernetes:kueue.x-k8s.io/*:ResourceFlavor",
            GKE_NODE_POOL,
            EKS_NODE_GROUP,
        ),
        check=check,
        reads_catalog=True,
        stack=True,
        config={
            "extraLabels": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "default": [],
                "description": (
                    "Further node labels a Topology level may use: labels your nodes get "
                    "outside the stack's node pools (e.g. from a labelling DaemonSet)."
                ),
            }
        },
    ),
    order=3040,
)
