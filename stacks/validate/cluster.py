"""``gpu-cluster:cluster``: name, settings of the other cloud, API access, the system pool, and the EKS control plane
(version, subnets, extended-support billing)."""

from __future__ import annotations

import ipaddress
import re

from catalog import Catalog, Cloud
from catalog.cloud_limits import cloud_limit
from stacks.spec.cluster import ClusterMode, ClusterSpec
from stacks.validate.issues import Issues, allowed_list
from stacks.validate.pool_zones import aws_zone_fix, zone_choices
from stacks.validate.names import DNS_LABEL

CLUSTER_NAME_MAX = {Cloud.GCP: 40, Cloud.AWS: 100}
EKS_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36")
AWS_SUBNET = re.compile(r"subnet-[0-9a-f]{8,17}")
IAM_PRINCIPAL = re.compile(r"arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:(role|user)/[A-Za-z0-9+=,.@_/-]+")
"""What an EKS access entry accepts as principal: an IAM role or user ARN (a role path is allowed)."""
STS_SESSION = re.compile(r"arn:aws(-cn|-us-gov)?:sts::([0-9]{12}):assumed-role/([^/]+)/.+")
OTHER_CLOUD_FIELDS = {
    Cloud.GCP: ("kubernetes_version", "subnets", "node_subnets", "cluster_autoscaler", "admin_principal_arns"),
    Cloud.AWS: ("release_channel", "network", "subnetwork", "location", "cloud_nat", "min_master_version"),
}
"""Cluster settings that only the other cloud reads, by model field name."""
AUTO_MODE_NETWORK = "default"
"""The one network GKE may be given without a subnetwork: the project's auto-mode ``default`` network (gcloud
container clusters create --subnetwork: "If the network is in custom subnet mode, --subnetwork must be specified";
cloud.google.com/kubernetes-engine/docs/how-to/alias-ips)."""


def check_cluster(issues: Issues, cat: Catalog, cloud: Cloud, region: str | None, cluster: ClusterSpec) -> None:
    """``issues``: the scope of ``gpu-cluster:cluster``."""
    limit = CLUSTER_NAME_MAX[cloud]
    if len(cluster.name) > limit or not DNS_LABEL.fullmatch(cluster.name):
        issues.error(
            "name",
            "not a valid cluster name",
            cluster.name,
            allowed=f"lower-case letters, digits and '-', starting with a letter, at most {limit} characters",
            fix="rename the cluster, e.g. 'ml-train'",
        )
    for field in sorted(set(OTHER_CLOUD_FIELDS[cloud]) & cluster.model_fields_set):
        alias = ClusterSpec.model_fields[field].alias
        assert alias is not None  # SpecModel's alias_generator gives every field an alias
        other = "an EKS" if cloud == Cloud.GCP else "a GKE"
        issues.error(
            alias,
            f"{alias} is {other} setting; this stack's cloud is {cloud.value}",
            getattr(cluster, field),
            fix=f"remove cluster.{alias}",
        )
    _check_authorized_networks(issues.at("authorizedNetworks"), cluster.authorized_networks)
    sp = cluster.system_pool
    if sp.min_nodes > sp.max_nodes:
        issues.error(
            ("systemPool", "minNodes"),
            "minNodes is larger than maxNodes",
            sp.min_nodes,
            allowed=f"1 … {sp.max_nodes} (maxNodes)",
            fix="lower minNodes or raise maxNodes",
        )
    if sp.machine_type is not None and sp.machine_type in cat.machine_types(cloud):
        issues.error(
            ("systemPool", "machineType"),
            "the system pool must be a CPU type",
            sp.machine_type,
            allowed=allowed_list(cat.system_machine_types(cloud)) + " (or any CPU type)",
            fix="GPU types belong in nodePools; pick a CPU type for add-ons",
        )
    if cluster.mode == ClusterMode.CREATE and region and cat.has_region(cloud, region):
        _check_system_pool_price(issues, cat, cloud, region, cluster)
    if cloud == Cloud.AWS:
        _check_eks_cluster(issues, cat, region, cluster)
    elif (
        cluster.mode == ClusterMode.CREATE
        and cluster.network not in (None, AUTO_MODE_NETWORK)
        and cluster.subnetwork is None
    ):
        # Only an auto-mode network lets GKE pick the region's subnetwork; on a custom-mode one (any network you
        # create yourself) the cluster create call fails at deploy time, after the other resources exist.
        issues.error(
            "network",
            "a network of your own needs cluster.subnetwork (GKE picks a subnetwork only on "
            "the auto-mode `default` network; on a custom-mode one the cluster create fails)",
            cluster.network,
            allowed="the name of the network's subnetwork in the stack region; or network 'default' "
            "(auto mode) or omitted",
            fix=f"set cluster.subnetwork to the subnetwork of {cluster.network} in {region or 'the region'} "
            f"(gcloud compute networks subnets list --network {cluster.network})",
        )
    elif (
        cluster.mode == ClusterMode.EXISTING
        and cluster.location
        and region
        and not (cluster.location == region or cluster.location.startswith(region + "-"))
    ):
        issues.error(
            "location",
            f"location is outside the stack region {region}",
            cluster.location,
            allowed=f"{region} or one of its zones",
            fix="set cluster.location to where the existing cluster runs (gcloud container clusters list)",
        )


def _check_system_pool_price(issues: Issues, cat: Catalog, cloud: Cloud, region: str, cluster: ClusterSpec) -> None:
    """The system pool is in every total: a type without a price would make the total a lie, so it is refused."""
    sp = cluster.system_pool
    machine = sp.machine_type_for(cloud)
    if machine in cat.machine_types(cloud) or cat.host_price(cloud, machine, region) is not None:
        return  # a GPU type is reported above as not a CPU type
    priced = [m for m in cat.system_machine_types(cloud) if cat.host_price(cloud, m, region) is not None]
    issues.error(
        ("systemPool", "machineType"),
        f"no on-demand price for the system pool's {machine} in {region}; refusing to print a total without it",
        machine,
        allowed=f"CPU types priced in {region}: {allowed_list(priced) or 'none'}",
        fix="omit systemPool.machineType (the default is priced in every catalog region), or add a dated, "
        "sourced row for it to catalog/data/prices.csv",
    )


AUTHORIZED_MIN_PREFIX = 8
"""``authorizedNetworks`` wider than a /8 are refused (the policy pack's security-authorized-network-width agrees)."""
AUTHORIZED_WARN_PREFIX = 16
"""Wider than a /16 is warned about: more than 65,536 addresses may try the API server's credentials."""


def _check_authorized_networks(networks: Issues, cidrs: list[str]) -> None:
    for i, cidr in enumerate(cidrs):
        try:
            net = ipaddress.ip_network(cidr, strict=True)
        except ValueError as exc:
            networks.error(
                i,
                f"not a valid CIDR ({exc})",
                cidr,
                allowed="an IPv4/IPv6 network such as 203.0.113.0/24",
                fix="write the network address with its prefix length",
            )
            continue
        if net.prefixlen == 0:
            networks.error(
                i,
                "the Kubernetes API must not be reachable from the whole internet",
                cidr,
                allowed="your office or VPN ranges, e.g. 203.0.113.0/24",
                fix="list only the ranges that run kubectl/pulumi; leave empty for a private endpoint",
            )
        elif net.version == 4 and net.prefixlen < AUTHORIZED_MIN_PREFIX:
            networks.error(
                i,
                f"{net.num_addresses:,} addresses may reach the Kubernetes API",
                cidr,
                allowed=f"IPv4 networks of /{AUTHORIZED_MIN_PREFIX} or narrower",
                fix="list only the ranges that run kubectl/pulumi; leave empty for a private endpoint",
            )
        elif net.version == 4 and net.prefixlen < AUTHORIZED_WARN_PREFIX:
            networks.warn(
                i,
                f"{net.num_addresses:,} addresses may reach the Kubernetes API",
                cidr,
                allowed=f"/{AUTHORIZED_WARN_PREFIX} or narrower is what an office or VPN needs",
                fix="narrow it to the ranges that run kubectl/pulumi",
            )


# -- EKS control plane ---------------------------------------------------------------------------------------------
def _check_eks_cluster(issues: Issues, cat: Catalog, region: str | None, cluster: ClusterSpec) -> None:
    if cluster.kubernetes_version not in EKS_VERSIONS:
        issues.error(
            "kubernetesVersion",
            "EKS version not in the supported set",
            cluster.kubernetes_version,
            allowed=allowed_list(EKS_VERSIONS),
            fix='quote the version in YAML ("1.35") and pick a supported one',
        )
    known = region is not None and cat.has_region(Cloud.AWS, region)
    subnets = issues.at("subnets")
    for zone, subnet in cluster.subnets.items():
        if known and region and cat.is_local_zone(Cloud.AWS, region, zone):
            limit = cloud_limit("eks-control-plane-no-local-zone")
            subnets.error(
                zone,
                f"a Local Zone subnet, and every cluster.subnets entry goes to the control plane: {limit.cite()}",
                zone,
                allowed="Availability Zones of the region",
                fix=f"move it to cluster.nodeSubnets.{zone} (node groups only)",
            )
        elif known and region and not cat.is_zone(Cloud.AWS, region, zone):
            subnets.error(
                zone,
                f"not an Availability Zone of {region}",
                zone,
                allowed=zone_choices(cat, Cloud.AWS, region),
                fix=aws_zone_fix(region, zone),
            )
        if not AWS_SUBNET.fullmatch(str(subnet)):
            subnets.error(
                zone,
                "not an EC2 subnet ID",
                subnet,
                allowed="subnet- followed by 8 or 17 hex digits",
                fix="copy the ID from `aws ec2 describe-subnets`",
            )
    node_subnets = issues.at("nodeSubnets")
    for zone, subnet in cluster.node_subnets.items():
        if (
            known
            and region
            and not (cat.is_zone(Cloud.AWS, region, zone) or cat.is_local_zone(Cloud.AWS, region, zone))
        ):
            node_subnets.error(
                zone,
                f"not an Availability Zone or Local Zone of {region}",
                zone,
                allowed=f"{zone_choices(cat, Cloud.AWS, region)}; or a Local Zone such as {region}-dfw-2a",
                fix=aws_zone_fix(region, zone),
            )
        if not AWS_SUBNET.fullmatch(str(subnet)):
            node_subnets.error(
                zone,
                "not an EC2 subnet ID",
                subnet,
                allowed="subnet- followed by 8 or 17 hex digits",
                fix="copy the ID from `aws ec2 describe-subnets`",
            )
    if cluster.mode == ClusterMode.CREATE and len(cluster.subnets) < 2:
        issues.error(
            "subnets",
            "a new EKS cluster needs subnets in at least two zones",
            cluster.subnets or None,
            allowed="two or more {zone: subnet-id} entries",
            fix="add a private subnet for a second Availability Zone",
        )
    if cluster.mode == ClusterMode.CREATE and cluster.kubernetes_version in EKS_VERSIONS:
        _check_eks_support(issues, cat, cluster.kubernetes_version)
    _check_admin_principals(issues, cluster)


def _check_admin_principals(issues: Issues, cluster: ClusterSpec) -> None:
    """Access entries take IAM role or user ARNs; an STS session ARN (what `aws sts get-caller-identity` prints for an
    assumed role) is refused with the role ARN it stands for."""
    if cluster.admin_principal_arns and cluster.mode == ClusterMode.EXISTING:
        issues.error(
            "adminPrincipalArns",
            "an existing cluster's access entries are not managed by this stack",
            cluster.admin_principal_arns,
            allowed="adminPrincipalArns only with mode: create",
            fix="remove cluster.adminPrincipalArns, or add the access entries where the cluster is managed",
        )
        return
    principals = issues.at("adminPrincipalArns")
    for i, arn in enumerate(cluster.admin_principal_arns):
        session = STS_SESSION.fullmatch(arn)
        if session:
            partition = arn.split(":")[1]
            principals.error(
                i,
                "an STS session ARN cannot be an access entry's principal",
                arn,
                allowed="an IAM role or user ARN",
                fix=f"use the role itself: arn:{partition}:iam::{session[2]}:role/{session[3]} (add the "
                "role's path if it has one)",
            )
        elif not IAM_PRINCIPAL.fullmatch(arn):
            principals.error(
                i,
                "not an IAM role or user ARN",
                arn,
                allowed="arn:aws:iam::<12-digit account>:role/<name> or …:user/<name>",
                fix="copy the ARN from `aws iam get-role --role-name <name>`",
            )


def _check_eks_support(issues: Issues, cat: Catalog, version: str) -> None:
    """A version past standard support on the catalog's price date bills the extended-support fee."""
    standard, fee = cat.control_plane[Cloud.AWS], cat.control_plane_fee(Cloud.AWS, version)
    calendar = cat.eks_versions.get(version)
    if calendar is None or fee.support != "extended":
        return
    current = [v for v in cat.eks_versions_in_standard_support() if v in EKS_VERSIONS]
    issues.warn(
        "kubernetesVersion",
        f"EKS {version} is past standard support (extended-support billing from "
        f"{calendar.end_of_standard_support}, 00:00 UTC), so the control plane costs "
        f"${fee.usd_per_hour:.2f}/h instead of ${standard.usd_per_hour:.2f}/h",
        version,
        allowed=f"versions in standard support on {standard.as_of}: {allowed_list(current)}",
        fix=f'set kubernetesVersion: "{current[0]}" (a deployed cluster upgrades one minor version at a time)'
        if current
        else "upgrade the cluster to a version in standard support",
    )
