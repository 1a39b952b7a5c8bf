"""The cluster as the cluster components need it: every field resolved from ``cluster`` (and the stack's cloud,
region, project, labels), so ``components/gke/cluster.py`` and ``components/eks/cluster.py`` read no spec. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from stacks.spec.fleet import FleetRole
from stacks.spec.cluster import ClusterMode
from stacks.spec.stack import StackSpec

if TYPE_CHECKING:  # fleet managers only (plan_stack imports it for them)
    from stacks.plan.fleet_egress import EgressPlan


@dataclass(frozen=True)
class ClusterPlan:
    name: str
    create: bool
    """``mode: create`` (else the cluster exists and is only read)."""
    project: str
    region: str
    location: str
    """GKE: where an existing cluster lives (``cluster.location`` or the region); created clusters use the region."""
    network: str | None
    subnetwork: str | None
    cloud_nat: bool
    """GKE: create Cloud NAT for the nodes' egress (default: when the cluster uses the default network)."""
    authorized_networks: tuple[str, ...]
    release_channel: str
    min_master_version: str | None
    kubernetes_version: str
    subnets: dict[str, str]
    """EKS: the control plane's subnets (Availability Zones only)."""
    deletion_protection: bool
    system_machine_type: str
    system_min_nodes: int
    system_max_nodes: int
    cluster_autoscaler: bool
    labels: dict[str, str]
    """The stack's labels (GCP resource labels, AWS tags)."""
    system_zones: list[str] | None = None
    """GKE: the zones the system pool starts in (the region's first ``minNodes``, at least one); None when the catalog
    does not know the region's zones (GKE then picks them)."""
    admin_principal_arns: tuple[str, ...] = ()
    """EKS: the principals given an admin access entry; empty: the identity running ``pulumi up``."""
    static_nat_addresses: int = 0
    """GKE: static external addresses reserved for the Cloud NAT, which then uses only them (a fleet manager's
    egress, ``stacks/plan/fleet_egress.py``); 0: the NAT picks its own (``AUTO_ONLY``)."""
    node_subnets: dict[str, str] = field(default_factory=dict)
    """EKS: subnets only node groups use (a Local Zone's); the control plane never gets them."""
    fleet_manager: str | None = None
    """A fleet worker's manager stack (``<org>/<project>/<stack>``): the API also admits that stack's
    ``fleetEgressAddresses`` (a StackReference, resolved at deploy)."""
    gateway_api: bool = False
    """GKE: turn on the Gateway API controller (standard channel: Gateway API and GKE policy CRDs), which the
    inference Gateway of ``serving`` needs; False leaves the field out."""
    gcs_fuse: bool = False
    """GKE: turn on the Cloud Storage FUSE CSI driver add-on: a served model's ``gs://`` weights are mounted with it
    (vLLM v0.10.0 reads no ``gs://``)."""

    @property
    def private_endpoint(self) -> bool:
        """No public API endpoint: nothing to admit (no authorized networks, no fleet manager)."""
        return not self.authorized_networks and self.fleet_manager is None


def system_pool_zones(region_zones: Sequence[str], min_nodes: int) -> list[str] | None:
    """The first ``min_nodes`` zones of the region (at least one); None when the catalog does not know the region
    (``region_zones`` empty: GKE then picks the zones)."""
    zones = list(region_zones)
    return zones[: max(1, min(min_nodes, len(zones)))] if zones else None


def plan_cluster(spec: StackSpec, region_zones: Sequence[str] = (), egress: EgressPlan | None = None) -> ClusterPlan:
    """``region_zones``: the region's zones from the catalog (GKE's system pool starts in the first of them);
    ``egress``: a fleet manager's egress plan (``stacks/plan/fleet_egress.py``), None otherwise."""
    c = spec.cluster
    worker = spec.fleet is not None and spec.fleet.role == FleetRole.WORKER
    return ClusterPlan(
        name=c.name,
        create=c.mode == ClusterMode.CREATE,
        project=spec.project or "",
        region=spec.region,
        location=c.location or spec.region,
        network=c.network,
        subnetwork=c.subnetwork,
        cloud_nat=c.cloud_nat if c.cloud_nat is not None else c.network is None,
        authorized_networks=tuple(c.authorized_networks),
        release_channel=c.release_channel.value,
        min_master_version=c.min_master_version,
        kubernetes_version=c.kubernetes_version,
        subnets=dict(c.subnets),
        node_subnets=dict(c.node_subnets),
        deletion_protection=c.deletion_protection,
        system_machine_type=c.system_pool.machine_type_for(spec.cloud),
        system_min_nodes=c.system_pool.min_nodes,
        system_max_nodes=c.system_pool.max_nodes,
        cluster_autoscaler=bool(c.cluster_autoscaler),
        labels=dict(spec.labels),
        system_zones=system_pool_zones(region_zones, c.system_pool.min_nodes),
        admin_principal_arns=tuple(c.admin_principal_arns),
        static_nat_addresses=egress.count if egress is not None else 0,  # 0 unless reserved (EgressPlan.count)
        fleet_manager=spec.fleet.manager if worker and spec.fleet is not None else None,
        gateway_api=spec.serving is not None,
        gcs_fuse=spec.serving is not None and any(s.model_uri.startswith("gs://") for s in spec.serving.services),
    )
