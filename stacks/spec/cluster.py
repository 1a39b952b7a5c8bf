"""The ``cluster`` section of the stack spec: create or adopt the Kubernetes cluster, its version, network, access,
system pool and maintenance. Shape only; the rules live in ``stacks/validate/cluster.py``."""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from catalog import Cloud
from stacks.spec.maintenance import Maintenance
from stacks.spec.model_base import SpecModel
from stacks.spec.pod_start import ImageMirror


class ClusterMode(str, Enum):
    CREATE = "create"
    EXISTING = "existing"


class ReleaseChannel(str, Enum):
    RAPID = "RAPID"
    REGULAR = "REGULAR"
    STABLE = "STABLE"


DEFAULT_SYSTEM_MACHINE = {Cloud.GCP: "e2-standard-4", Cloud.AWS: "m6i.xlarge"}
"""CPU node type of the system pool when ``cluster.systemPool.machineType`` is omitted."""


class SystemPool(SpecModel):
    machine_type: str | None = Field(
        None,
        description=(
            "CPU node type for cluster add-ons. Omitted: `e2-standard-4` (GKE) or `m6i.xlarge` (EKS), priced in every "
            "catalog region. Another type needs a catalog price in the region (the cost total always includes it)."
        ),
    )

    def machine_type_for(self, cloud: Cloud) -> str:
        return self.machine_type or DEFAULT_SYSTEM_MACHINE[cloud]

    min_nodes: int = Field(1, ge=1, description="Default 1.")
    max_nodes: int = Field(3, ge=1, description="Default 3.")


class ClusterSpec(SpecModel):
    name: str = Field(description="Cluster name (GKE: ≤ 40 chars; EKS: ≤ 100), lower-case letters, digits, `-`.")
    mode: ClusterMode = Field(
        ClusterMode.CREATE,
        description=(
            "`create` (default): a new cluster with secure defaults. `existing`: add pools to a cluster by name."
        ),
    )
    location: str | None = Field(
        None,
        description=(
            "GKE only: the cluster's location for `existing` clusters (a region or zone). Omitted: the stack region."
        ),
    )
    release_channel: ReleaseChannel = Field(ReleaseChannel.REGULAR, description="GKE release channel. Default REGULAR.")
    min_master_version: str | None = Field(
        None,
        description=(
            "GKE only, created clusters: the minimum control-plane version (`min_master_version`: `1.33`, `1.33.5` or "
            "`1.33.5-gke.1080000`, or `latest`), within the release channel. Omitted: the channel's default version, "
            "which gpu-cluster cannot check against the GPU fabric's version floor (the preview says so). Set: a version "
            "below the floor of a fabric pool's fabric is refused."
        ),
    )
    kubernetes_version: str = Field(
        "1.35",
        description=(
            "EKS Kubernetes version. Default 1.35 (1.34 reached end of standard support on 2026-12-02; versions past "
            "it bill the extended-support fee)."
        ),
    )
    network: str | None = Field(
        None,
        description="GKE VPC network name. Omitted: `default`. Any other network "
        "(custom mode) needs `subnetwork` as well.",
    )
    subnetwork: str | None = Field(
        None,
        description="GKE subnetwork name. Required with a `network` other than "
        "`default` (GKE picks a subnetwork only on the auto-mode `default` network). "
        "Omitted: the default network's subnetwork in the region.",
    )
    subnets: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "EKS: private subnet ID per Availability Zone, e.g. `{us-east-1a: subnet-0abc…}`. Pools use the subnets "
            "of their zones; a new cluster needs at least two zones. Every entry also goes to the control plane, so no "
            "Local Zone subnet here (use `nodeSubnets`)."
        ),
    )
    node_subnets: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "EKS: subnets for GPU node groups only, by zone, e.g. a Local Zone `{us-east-1-dfw-2a: subnet-0abc…}` "
            "(P6e-GB200 Capacity Blocks are sold only there). The control plane never gets them (it runs only in the "
            "Region's Availability Zones). A pool's zone takes its subnet from here first, then from `subnets`."
        ),
    )
    authorized_networks: list[str] = Field(
        default_factory=list,
        description=(
            "CIDRs allowed to reach the Kubernetes API. Empty (default): private endpoint only. Never 0.0.0.0/0."
        ),
    )
    deletion_protection: bool = Field(
        True,
        description=(
            "Protect the cluster from deletion (GKE `deletion_protection` and Pulumi `protect`). Default true."
        ),
    )
    cloud_nat: bool | None = Field(
        None,
        description=(
            "GKE only: create a Cloud Router + NAT so private nodes can pull images from outside Google (nvcr.io, "
            "ghcr.io, registry.k8s.io). Omitted: created when `network` is omitted (the default network), not when you "
            "bring your own network (it usually has its NAT already)."
        ),
    )
    system_pool: SystemPool = Field(
        default_factory=SystemPool,
        description=("Untainted CPU pool for cluster add-ons (GPU pools are tainted, so add-ons cannot run there)."),
    )
    maintenance: Maintenance | None = Field(
        None,
        description=(
            "GKE only: when GKE may upgrade (window) and when not (exclusions). Omitted: a weekend window on clusters "
            "with a multi-node or reservation pool, GKE's default elsewhere."
        ),
    )
    cluster_autoscaler: bool = Field(
        True,
        description=(
            "EKS only: install the Kubernetes Cluster Autoscaler (kube-system, on the system pool, EKS Pod Identity) so "
            "node groups scale between minNodes and maxNodes, from zero too. Default true. Set false only when an "
            "`existing` cluster already runs one (or Karpenter); GKE scales pools itself."
        ),
    )
    admin_principal_arns: list[str] = Field(
        default_factory=list,
        description=(
            "EKS only, created clusters: IAM role or user ARNs (`arn:aws:iam::<account>:role/<name>`) that get cluster "
            "admin through an EKS access entry (AmazonEKSClusterAdminPolicy, cluster scope), e.g. your SSO admin role "
            "and the CI role; list the identity that runs `pulumi up` too, or the run cannot install the add-ons. Nobody "
            "else is admin: the cluster is created with `bootstrapClusterCreatorAdminPermissions: false`. Empty "
            "(default): one entry for the IAM role (or user) running `pulumi up`, read from its session."
        ),
    )
    image_mirrors: list[ImageMirror] = Field(
        default_factory=list,
        description=(
            "GKE only: Artifact Registry remote repositories (in the stack's project and region) that mirror nvcr.io or "
            "ghcr.io, so GPU images come from Artifact Registry, stay in the region and can be streamed. Empty "
            "(default): none."
        ),
    )
