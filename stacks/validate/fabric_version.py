"""``cluster.minMasterVersion`` against the GPU fabric's GKE version floor (``catalog/data/fabric-versions.csv``).

A created cluster with a pinned version below the floor of a fabric pool's fabric is refused: GKE would create it,
and the fabric (TCPX/TCPXO plugins, managed accelerator networking) would not work on its nodes. A version GKE
completes itself (``1.32``) cannot be compared with a ``-gke.N`` floor of that minor: a warning says so. Without a
pinned version the release channel picks it; the preview names the floor and says it was not checked.
"""

from __future__ import annotations

from typing import Iterable

from catalog import Cloud
from catalog.fabric import FabricCatalog, load_fabric_catalog
from catalog.gke_version import GKE_VERSION, FloorCheck, check_floor
from stacks.plan.fabric import fabric_mode
from stacks.spec.fabric import FabricMode
from stacks.spec.cluster import ClusterMode, ClusterSpec
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues

FIELD = "minMasterVersion"


def check_fabric_versions(
    cluster_at: Issues,
    cloud: Cloud,
    cluster: ClusterSpec,
    pools: Iterable[tuple[int, NodePool]],
    fabrics: FabricCatalog | None = None,
) -> None:
    """``cluster_at``: the scope of ``gpu-cluster:cluster``."""
    version = cluster.min_master_version
    if cloud != Cloud.GCP or version is None:
        return  # EKS: stacks/validate/cluster.py refuses the GKE-only field
    if cluster.mode != ClusterMode.CREATE:
        cluster_at.error(
            FIELD,
            "minMasterVersion sets the version of a cluster gpu-cluster creates; this cluster is mode existing",
            version,
            allowed="unset with mode existing",
            fix="remove cluster.minMasterVersion (upgrade the existing cluster with gcloud or its own program)",
        )
        return
    if version != "latest" and not GKE_VERSION.fullmatch(version):
        cluster_at.error(
            FIELD,
            "not a GKE version",
            version,
            allowed="latest, a minor (1.33), minor and patch (1.33.5) or a full GKE version (1.33.5-gke.1080000)",
            fix="write the version as `gcloud container get-server-config` lists it, e.g. 1.33.5-gke.1080000",
        )
        return
    fab = fabrics or load_fabric_catalog()
    for _, pool in pools:
        machine = fab.for_machine(cloud, pool.machine_type)
        mode = fabric_mode(pool.fabric)
        if machine is None or mode == FabricMode.OFF or (mode == FabricMode.AUTO and not pool.multi_node):
            continue
        managed = mode == FabricMode.MANAGED
        verdict = check_floor(version, fab.version_floors(machine.kind, managed))
        if verdict.floor is None or verdict.check == FloorCheck.MEETS:
            continue
        what = (
            f"{machine.kind.display_name}{' (GKE-managed networking)' if managed else ''} on pool "
            f"'{pool.name}' ({pool.machine_type})"
        )
        floor = f"{verdict.floor.min_version} for GKE {verdict.floor.minor}"
        if verdict.check == FloorCheck.BELOW:
            cluster_at.error(
                FIELD,
                f"{version} is below the GKE version {what} needs",
                version,
                allowed=f"{floor} or later (source: {verdict.floor.source})",
                fix=f"set cluster.minMasterVersion to {verdict.floor.min_version} or later (a version "
                f"of release channel {cluster.release_channel.value})",
            )
        else:
            cluster_at.warn(
                FIELD,
                f"{version} leaves the patch to GKE, so gpu-cluster cannot tell whether it meets "
                f"the version {what} needs",
                version,
                allowed=f"{floor} or later",
                fix=f"pin a full version, e.g. {verdict.floor.min_version}",
            )
