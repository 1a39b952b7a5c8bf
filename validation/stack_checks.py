"""Rules that need the catalog or several fields at once. Each check returns SpecIssues; none raises."""
from __future__ import annotations

import ipaddress
import re
from typing import Iterable

from catalog import CapacityType, Catalog, Cloud
from validation.issues import SpecIssue, allowed_list, choice_fix, path_of
from stacks.spec import GPU_TAINT_KEY, POOL_LABEL_KEY, AwsReservationKind, ClusterMode, ClusterSpec, NodePool

DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
GCP_PROJECT = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")
AWS_ACCOUNT = re.compile(r"^[0-9]{12}$")
AWS_SUBNET = re.compile(r"^subnet-[0-9a-f]{8,17}$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

POOL_NAME_MAX = 32
"""Pulumi auto-naming appends '-' + 7 characters; GKE node pool names stop at 40."""
CLUSTER_NAME_MAX = {Cloud.GCP: 40, Cloud.AWS: 100}
GKE_COMPACT_PLACEMENT_MAX_NODES = 150
"""Conservative GKE compact-placement group size (newer GKE versions document 1,500; shared facts §3)."""
EKS_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36")
EKS_MAX_UNAVAILABLE = 100
"""EKS NodegroupUpdateConfig.maxUnavailable: 1 … 100 (EKS API reference)."""
EC2_PLACEMENT_GROUP_ID = re.compile(r"^pg-[0-9a-f]{8,17}$")
EC2_PLACEMENT_GROUP_NAME = re.compile(r"^[ -~]{1,255}$")
RESERVED_LABEL_PREFIXES = ("kubernetes.io/", "k8s.io/", "cloud.google.com/", "eks.amazonaws.com/", "gpu-cluster/")
CLOUD_NAME = {Cloud.GCP: "a GCP", Cloud.AWS: "an AWS"}
"""For messages: 'p5.48xlarge is an AWS machine type'."""


def _err(path: str, problem: str, value=None, allowed: str | None = None, fix: str | None = None) -> SpecIssue:
    return SpecIssue(path=path, problem=problem, value=value, allowed=allowed, fix=fix)


def _warn(path: str, problem: str, value=None, allowed: str | None = None, fix: str | None = None) -> SpecIssue:
    return SpecIssue(path=path, problem=problem, value=value, allowed=allowed, fix=fix, warning=True)


def _valid_label_key(key: str) -> bool:
    """Kubernetes qualified name: ``[prefix/]name`` (labels and taints share the rule)."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(LABEL_NAME.match(name))


# -- top level ---------------------------------------------------------------------------------------------------
def check_account(cloud: Cloud, project: str | None, account_id: str | None,
                  project_given: bool = False) -> list[SpecIssue]:
    """``project_given``: a project was set but failed its type check (already reported), so it is not missing."""
    issues = []
    if cloud == Cloud.GCP:
        if project is None:
            if not project_given:
                issues.append(_err(path_of("project"), "a GCP stack needs the project ID", None,
                                   "a GCP project ID: 6-30 lower-case letters, digits or '-'",
                                   "pulumi config set gpu-cluster:project <your-project-id>"))
        elif not GCP_PROJECT.match(project):
            issues.append(_err(path_of("project"), "not a valid GCP project ID", project,
                               "6-30 lower-case letters, digits or '-', starting with a letter",
                               "use the project ID (not the display name or number) from `gcloud projects list`"))
        if account_id is not None:
            issues.append(_err(path_of("accountId"), "accountId is an AWS setting; this stack's cloud is gcp",
                               account_id, fix="remove gpu-cluster:accountId, or set gpu-cluster:cloud to aws"))
    else:
        if project is not None:
            issues.append(_err(path_of("project"), "project is a GCP setting; this stack's cloud is aws", project,
                               fix="remove gpu-cluster:project (use gpu-cluster:accountId to pin the AWS account)"))
        if account_id is not None and not AWS_ACCOUNT.match(account_id):
            issues.append(_err(path_of("accountId"), "not a valid AWS account ID", account_id, "exactly 12 digits",
                               "quote it in YAML so leading zeros survive, e.g. accountId: \"012345678901\""))
    return issues


def check_region(cat: Catalog, cloud: Cloud, region: str) -> list[SpecIssue]:
    known = cat.region_names(cloud)
    if region in known:
        return []
    other = Cloud.AWS if cloud == Cloud.GCP else Cloud.GCP
    if region in cat.region_names(other):
        return [_err(path_of("region"), f"{region} is {CLOUD_NAME[other]} region; this stack's cloud is {cloud.value}",
                     region, allowed_list(known), f"pick {CLOUD_NAME[cloud]} region, or set gpu-cluster:cloud to "
                     f"{other.value} (and use {other.value} machine types and zones)")]
    return [_err(path_of("region"), f"no catalog data for {cloud.value} region {region!r}", region, allowed_list(known),
                 choice_fix("gpu-cluster:region", region, known,
                            ", or add the region's zones and prices to catalog/data/regions.csv and prices.csv"))]


def check_labels(labels: dict[str, str], where: tuple, resource_labels: bool = False) -> list[SpecIssue]:
    """Kubernetes label syntax (node labels) or GCP label syntax (resource labels)."""
    issues = []
    for key, value in labels.items():
        path = path_of(*where, key)
        if resource_labels:
            if not re.match(r"^[a-z][-_a-z0-9]{0,62}$", key):
                issues.append(_err(path, "not a valid cloud label key", key,
                                   "1-63 lower-case letters, digits, '-' or '_', starting with a letter",
                                   "rename the key, e.g. 'cost-center'"))
            if not re.match(r"^[-_a-z0-9]{0,63}$", str(value)):
                issues.append(_err(path, "not a valid cloud label value", value,
                                   "0-63 lower-case letters, digits, '-' or '_'", "lower-case the value"))
            continue
        if not _valid_label_key(key):
            issues.append(_err(path, "not a valid Kubernetes label key", key,
                               "[prefix/]name: name ≤ 63 alphanumerics, '-', '_' or '.'; prefix a DNS subdomain",
                               "rename the label key"))
        elif key == POOL_LABEL_KEY or key.startswith(RESERVED_LABEL_PREFIXES):
            issues.append(_err(path, "label key is reserved", key,
                               f"any key outside {', '.join(RESERVED_LABEL_PREFIXES)}",
                               f"drop it: gpu-cluster sets {POOL_LABEL_KEY} itself, and the cloud owns its prefixes"))
        if len(str(value)) > 63 or not LABEL_VALUE.match(str(value)):
            issues.append(_err(path, "not a valid Kubernetes label value", value,
                               "≤ 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric",
                               "shorten or simplify the value"))
    return issues


# -- cluster -------------------------------------------------------------------------------------------------------
def check_cluster(cat: Catalog, cloud: Cloud, region: str | None, cluster: ClusterSpec) -> list[SpecIssue]:
    issues = []
    limit = CLUSTER_NAME_MAX[cloud]
    if len(cluster.name) > limit or not DNS_LABEL.match(cluster.name):
        issues.append(_err(path_of("cluster", "name"), "not a valid cluster name", cluster.name,
                           f"lower-case letters, digits and '-', starting with a letter, at most {limit} characters",
                           "rename the cluster, e.g. 'ml-train'"))
    wrong_cloud = {Cloud.GCP: ("kubernetes_version", "subnets", "cluster_autoscaler"),
                   Cloud.AWS: ("release_channel", "network", "subnetwork", "location", "cloud_nat")}[cloud]
    for field in sorted(set(wrong_cloud) & cluster.model_fields_set):
        alias = ClusterSpec.model_fields[field].alias
        assert alias is not None  # SpecModel's alias_generator gives every field an alias
        other = "an EKS" if cloud == Cloud.GCP else "a GKE"
        issues.append(_err(path_of("cluster", alias), f"{alias} is {other} setting; this stack's cloud is "
                           f"{cloud.value}", getattr(cluster, field), fix=f"remove cluster.{alias}"))
    for i, cidr in enumerate(cluster.authorized_networks):
        path = path_of("cluster", "authorizedNetworks", i)
        try:
            net = ipaddress.ip_network(cidr, strict=True)
        except ValueError as exc:
            issues.append(_err(path, f"not a valid CIDR ({exc})", cidr, "an IPv4/IPv6 network such as 203.0.113.0/24",
                               "write the network address with its prefix length"))
            continue
        if net.prefixlen == 0:
            issues.append(_err(path, "the Kubernetes API must not be reachable from the whole internet", cidr,
                               "your office or VPN ranges, e.g. 203.0.113.0/24",
                               "list only the ranges that run kubectl/pulumi; leave empty for a private endpoint"))
    sp = cluster.system_pool
    if sp.min_nodes > sp.max_nodes:
        issues.append(_err(path_of("cluster", "systemPool", "minNodes"), "minNodes is larger than maxNodes",
                           sp.min_nodes, f"1 … {sp.max_nodes} (maxNodes)", "lower minNodes or raise maxNodes"))
    if sp.machine_type is not None and sp.machine_type in cat.machine_types(cloud):
        issues.append(_err(path_of("cluster", "systemPool", "machineType"), "the system pool must be a CPU type",
                           sp.machine_type, allowed_list(cat.system_machine_types(cloud)) + " (or any CPU type)",
                           "GPU types belong in nodePools; pick a CPU type for add-ons"))
    if cloud == Cloud.AWS:
        issues += _check_eks_cluster(cat, region, cluster)
    elif cluster.mode == ClusterMode.EXISTING and cluster.location and region \
            and not (cluster.location == region or cluster.location.startswith(region + "-")):
        issues.append(_err(path_of("cluster", "location"), f"location is outside the stack region {region}",
                           cluster.location, f"{region} or one of its zones",
                           "set cluster.location to where the existing cluster runs (gcloud container clusters list)"))
    return issues


def _check_eks_cluster(cat: Catalog, region: str | None, cluster: ClusterSpec) -> list[SpecIssue]:
    issues = []
    if cluster.kubernetes_version not in EKS_VERSIONS:
        issues.append(_err(path_of("cluster", "kubernetesVersion"), "EKS version not in the supported set",
                           cluster.kubernetes_version, allowed_list(EKS_VERSIONS),
                           "quote the version in YAML (\"1.35\") and pick a supported one"))
    zones = cat.zones(Cloud.AWS, region) if region else ()
    for zone, subnet in cluster.subnets.items():
        path = path_of("cluster", "subnets", zone)
        if zones and zone not in zones:
            issues.append(_err(path, f"not an Availability Zone of {region}", zone, allowed_list(zones),
                               choice_fix("the subnet's zone", zone, zones)))
        if not AWS_SUBNET.match(str(subnet)):
            issues.append(_err(path, "not an EC2 subnet ID", subnet, "subnet- followed by 8 or 17 hex digits",
                               "copy the ID from `aws ec2 describe-subnets`"))
    if cluster.mode == ClusterMode.CREATE and len(cluster.subnets) < 2:
        issues.append(_err(path_of("cluster", "subnets"), "a new EKS cluster needs subnets in at least two zones",
                           cluster.subnets or None, "two or more {zone: subnet-id} entries",
                           "add a private subnet for a second Availability Zone"))
    if cluster.mode == ClusterMode.CREATE and cluster.kubernetes_version in EKS_VERSIONS:
        issues += _check_eks_support(cat, cluster.kubernetes_version)
    return issues


def _check_eks_support(cat: Catalog, version: str) -> list[SpecIssue]:
    """A version past standard support on the catalog's price date bills the extended-support fee."""
    standard, fee = cat.control_plane[Cloud.AWS], cat.control_plane_fee(Cloud.AWS, version)
    calendar = cat.eks_versions.get(version)
    if calendar is None or fee.support != "extended":
        return []
    current = [v for v in cat.eks_versions_in_standard_support() if v in EKS_VERSIONS]
    return [_warn(path_of("cluster", "kubernetesVersion"),
                  f"EKS {version} is past standard support (extended-support billing from "
                  f"{calendar.end_of_standard_support}, 00:00 UTC), so the control plane costs "
                  f"${fee.usd_per_hour:.2f}/h instead of ${standard.usd_per_hour:.2f}/h", version,
                  f"versions in standard support on {standard.as_of}: {allowed_list(current)}",
                  f"set kubernetesVersion: \"{current[0]}\" (a deployed cluster upgrades one minor version at a time)"
                  if current else "upgrade the cluster to a version in standard support")]


# -- node pools ----------------------------------------------------------------------------------------------------
def check_pool(cat: Catalog, cloud: Cloud, region: str | None, cluster: ClusterSpec | None, i: int,
               pool: NodePool) -> list[SpecIssue]:
    issues = []
    p = lambda *rest: path_of("nodePools", i, *rest)  # noqa: E731 - path builder
    if len(pool.name) > POOL_NAME_MAX or not DNS_LABEL.match(pool.name):
        issues.append(_err(p("name"), "not a valid pool name", pool.name,
                           f"lower-case letters, digits and '-', starting with a letter, at most {POOL_NAME_MAX} "
                           "characters", "rename the pool, e.g. 'h100-train'"))
    if pool.min_nodes > pool.max_nodes:
        issues.append(_err(p("minNodes"), "minNodes is larger than maxNodes", pool.min_nodes,
                           f"0 … {pool.max_nodes} (maxNodes)", "lower minNodes or raise maxNodes"))
    if pool.upgrade.max_surge == 0 and pool.upgrade.max_unavailable == 0:
        issues.append(_err(p("upgrade"), "an upgrade with maxSurge 0 and maxUnavailable 0 can never progress",
                           {"maxSurge": 0, "maxUnavailable": 0}, "at least one of them > 0",
                           "use maxSurge: 0, maxUnavailable: 1 (no spare GPUs needed)"))
    if cloud == Cloud.AWS:
        issues += _check_eks_upgrade(pool, p)
    issues += check_labels(pool.labels, ("nodePools", i, "labels"))
    issues += _check_taints(pool, p)
    issues += _check_capacity(cloud, pool, p)
    machine, machine_issues = _check_machine(cat, cloud, i, pool, p)
    issues += machine_issues
    if region is not None:
        issues += _check_zones(cat, cloud, region, cluster, pool, p)
        if machine is not None:
            issues += _check_price(cat, cloud, region, pool, machine, p)
    if pool.multi_node:
        issues += _check_multi_node(cloud, pool, machine, p)
    return issues


def _check_taints(pool: NodePool, p) -> list[SpecIssue]:
    issues, seen = [], set()
    for j, taint in enumerate(pool.taints):
        if taint.key == GPU_TAINT_KEY:
            issues.append(_err(p("taints", j, "key"), "the GPU taint is already set on every GPU pool", taint.key,
                               f"any key except {GPU_TAINT_KEY}", "remove this taint"))
        elif not _valid_label_key(taint.key):
            issues.append(_err(p("taints", j, "key"), "not a valid Kubernetes taint key", taint.key,
                               "[prefix/]name: name ≤ 63 alphanumerics, '-', '_' or '.'; prefix a DNS subdomain",
                               "rename the taint key, e.g. 'dedicated'"))
        if len(taint.value) > 63 or not LABEL_VALUE.match(taint.value):
            issues.append(_err(p("taints", j, "value"), "not a valid Kubernetes taint value", taint.value,
                               "≤ 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric (or empty)",
                               "shorten or simplify the value"))
        if (taint.key, taint.effect) in seen:
            issues.append(_err(p("taints", j), "duplicate taint", taint.key, "one taint per key and effect",
                               "remove the duplicate"))
        seen.add((taint.key, taint.effect))
    return issues


def _check_capacity(cloud: Cloud, pool: NodePool, p) -> list[SpecIssue]:
    cap, issues = pool.capacity, []
    if cap.type == CapacityType.RESERVATION and not cap.reservation:
        what = "GKE specific reservation name" if cloud == Cloud.GCP else "capacity reservation ID (cr-…)"
        issues.append(_err(p("capacity", "reservation"), "a reservation pool needs the reservation to consume", None,
                           f"the {what}", "set capacity.reservation"))
    if cap.type != CapacityType.RESERVATION and (cap.reservation or cap.reservation_project or cap.reservation_kind
                                                 or cap.placement_group):
        issues.append(_err(p("capacity", "type"), f"reservation settings are given but capacity.type is "
                           f"{cap.type.value}", cap.type.value, "reservation",
                           "set capacity.type: reservation, or drop the reservation fields "
                           "(spot nodes cannot consume a reservation)"))
    if cloud == Cloud.AWS and cap.reservation_project:
        issues.append(_err(p("capacity", "reservationProject"), "reservationProject is a GKE setting",
                           cap.reservation_project, fix="remove capacity.reservationProject"))
    if cloud == Cloud.GCP and cap.reservation_kind:
        issues.append(_err(p("capacity", "reservationKind"), "reservationKind is an EKS setting",
                           cap.reservation_kind.value, fix="remove capacity.reservationKind"))
    if cap.placement_group is not None:
        issues += _check_placement_group(cloud, pool, p)
    if cloud == Cloud.AWS and cap.type == CapacityType.RESERVATION and cap.reservation \
            and not re.match(r"^cr-[0-9a-f]{8,17}$", cap.reservation):
        issues.append(_err(p("capacity", "reservation"), "not an EC2 capacity reservation ID", cap.reservation,
                           "cr- followed by 8 or 17 hex digits", "copy the ID from `aws ec2 "
                           "describe-capacity-reservations` (capacity blocks have cr- IDs too)"))
    if cloud == Cloud.GCP and cap.type == CapacityType.RESERVATION and pool.upgrade.max_surge > 0:
        issues.append(_warn(p("upgrade", "maxSurge"), "a surge node needs spare reservation capacity; an "
                            "exact-size reservation blocks the upgrade", pool.upgrade.max_surge, "0",
                            "use maxSurge: 0, maxUnavailable: 1 unless the reservation has spare nodes"))
    return issues


def _check_placement_group(cloud: Cloud, pool: NodePool, p) -> list[SpecIssue]:
    """``capacity.placementGroup``: the cluster placement group an EKS ODCR was created in. A targeted reservation
    created in a placement group serves only instances launched into that group ("Use Capacity Reservations with
    cluster placement groups", docs.aws.amazon.com/AWSEC2/latest/UserGuide/cr-cpg.html); Capacity Blocks are placed
    close together in EC2 UltraClusters already (EC2 API reference, CapacityBlock)."""
    cap, path = pool.capacity, p("capacity", "placementGroup")
    assert cap.placement_group is not None  # the caller checks only a pool that sets one
    if cloud == Cloud.GCP:
        return [_err(path, "placementGroup is an EKS setting", cap.placement_group,
                     fix="remove capacity.placementGroup (GKE: multiNode: true adds compact placement)")]
    if cap.type != CapacityType.RESERVATION:
        return []  # reported once, as reservation settings on a non-reservation pool
    if cap.reservation_kind == AwsReservationKind.CAPACITY_BLOCK:
        return [_err(path, "a capacity block takes no placement group: its instances are already placed close "
                     "together in an EC2 UltraCluster", cap.placement_group, "omitted for capacity blocks",
                     "remove capacity.placementGroup")]
    if EC2_PLACEMENT_GROUP_ID.match(cap.placement_group):
        return [_err(path, "this is a placement group ID; give its name", cap.placement_group,
                     "the placement group name (1-255 ASCII characters)",
                     "copy GroupName from `aws ec2 describe-placement-groups --group-ids " + cap.placement_group + "`")]
    if not EC2_PLACEMENT_GROUP_NAME.match(cap.placement_group):
        return [_err(path, "not a valid EC2 placement group name", cap.placement_group,
                     "1-255 printable ASCII characters", "copy the name from the reservation's PlacementGroupArn "
                     "(`aws ec2 describe-capacity-reservations`)")]
    return []


def _check_eks_upgrade(pool: NodePool, p) -> list[SpecIssue]:
    """EKS managed node groups have no surge count: updateConfig has maxUnavailable (1-100) and an update strategy,
    DEFAULT (new nodes first: the ASG grows by the larger of 2 × its Availability Zones and maxUnavailable) or
    MINIMAL (old nodes terminated first, for scarce GPUs). gpu-cluster maps maxSurge 0 to MINIMAL and maxSurge > 0
    to DEFAULT (EKS API NodegroupUpdateConfig; EKS user guide "Understand each phase of node updates")."""
    up, issues = pool.upgrade, []
    if up.max_unavailable == 0 and up.max_surge > 0:  # both 0 is reported by check_pool for every cloud
        issues.append(_err(p("upgrade", "maxUnavailable"), "EKS managed node groups update at least one node at a "
                           "time; maxUnavailable 0 is not accepted", 0, f"1 … {EKS_MAX_UNAVAILABLE}",
                           "set maxUnavailable: 1 (EKS has no surge count to keep every node available)"))
    elif up.max_unavailable > EKS_MAX_UNAVAILABLE:
        issues.append(_err(p("upgrade", "maxUnavailable"), f"EKS updates at most {EKS_MAX_UNAVAILABLE} nodes at once",
                           up.max_unavailable, f"1 … {EKS_MAX_UNAVAILABLE}",
                           f"set maxUnavailable: {EKS_MAX_UNAVAILABLE} or less"))
    if up.max_surge > 0:
        zones = len(set(pool.zones))
        launched = max(2 * zones, up.max_unavailable)
        reservation = ("; a reservation without that many spare nodes blocks the update"
                       if pool.capacity.type == CapacityType.RESERVATION else "")
        issues.append(_warn(p("upgrade", "maxSurge"), f"EKS managed node groups have no surge count: maxSurge > 0 "
                            f"selects the DEFAULT update strategy, which launches up to {launched} new nodes (the "
                            f"larger of 2 × {zones} Availability Zone{'s' if zones != 1 else ''} and maxUnavailable) "
                            f"before terminating old ones{reservation}", up.max_surge,
                            "0 (update strategy MINIMAL: old nodes are terminated before new ones launch)",
                            "use maxSurge: 0 on GPU pools (no spare GPUs needed), or keep it to accept EKS's surge"))
    return issues


def _check_machine(cat: Catalog, cloud: Cloud, i: int, pool: NodePool, p):
    known = cat.machine_types(cloud)
    if pool.machine_type not in known:
        other = Cloud.AWS if cloud == Cloud.GCP else Cloud.GCP
        if pool.machine_type in cat.machine_types(other):
            problem = f"{pool.machine_type} is {CLOUD_NAME[other]} machine type; this stack's cloud is {cloud.value}"
            theirs = cat.machines.get((other, pool.machine_type))
            same = [m.machine_type for m in sorted(cat.machines.values(), key=lambda m: m.machine_type)
                    if theirs is not None and m.cloud == cloud and m.gpu_model == theirs.gpu_model
                    and m.gpus == theirs.gpus and any(k[:2] == (cloud, m.machine_type) for k in cat.prices)]
            fix = (f"use {CLOUD_NAME[cloud]} type with the same GPUs ({theirs.gpus} × {theirs.gpu_model.value}): "
                   f"{', '.join(same)}" if same and theirs is not None else f"pick {CLOUD_NAME[cloud]} machine type from the allowed list")
            fix += f"; or move this pool to {CLOUD_NAME[other]} stack"
        else:
            problem = f"unknown GPU machine type for {cloud.value}"
            fix = choice_fix(f"nodePools[{i}].machineType", pool.machine_type, known,
                             ", or add it to catalog/data/machines.csv")
        return None, [_err(p("machineType"), problem, pool.machine_type, allowed_list(known), fix)]
    fixed = cat.machines.get((cloud, pool.machine_type))
    acc = pool.accelerator
    if fixed is not None:
        issues = []
        if acc is not None and acc.type != fixed.accelerator:
            issues.append(_err(p("accelerator", "type"), f"{pool.machine_type} comes with {fixed.accelerator} GPUs; "
                               f"{acc.type} cannot be attached to it", acc.type, fixed.accelerator,
                               "remove accelerator (the catalog knows it) or pick a machine type for that GPU"))
        if acc is not None and acc.count is not None and acc.count != fixed.gpus:
            issues.append(_err(p("accelerator", "count"), f"{pool.machine_type} has exactly {fixed.gpus} × "
                               f"{fixed.accelerator}", acc.count, str(fixed.gpus),
                               "remove accelerator.count, or pick the machine size with that many GPUs"))
        return (fixed if not issues else None), issues
    choices = cat.attachable_gpus(cloud, pool.machine_type)
    names = [a.accelerator for a in choices]
    if acc is None:
        return None, [_err(p("accelerator"), f"{pool.machine_type} has no built-in GPU; say which GPU to attach",
                           None, allowed_list(names), "add accelerator: {type: nvidia-tesla-t4, count: 1}")]
    gpu = cat.attachable.get((cloud, acc.type))
    if gpu is None or pool.machine_type not in gpu.host_machine_types:
        return None, [_err(p("accelerator", "type"), f"GPU cannot be attached to {pool.machine_type}", acc.type,
                           allowed_list(names), choice_fix("accelerator.type", acc.type, names))]
    if acc.count is None:
        return None, [_err(p("accelerator", "count"), f"say how many {acc.type} GPUs to attach to {pool.machine_type}",
                           None, ", ".join(map(str, gpu.allowed_counts)),
                           f"add accelerator.count: {gpu.allowed_counts[0]} (or another allowed count)")]
    if acc.count not in gpu.allowed_counts:
        return None, [_err(p("accelerator", "count"), f"{acc.type} attaches in fixed counts", acc.count,
                           ", ".join(map(str, gpu.allowed_counts)), "pick one of the allowed counts")]
    return cat.resolve(cloud, pool.machine_type, acc.type, acc.count), []


def _check_zones(cat: Catalog, cloud: Cloud, region: str, cluster: ClusterSpec | None, pool: NodePool,
                 p) -> list[SpecIssue]:
    issues, zones = [], cat.zones(cloud, region)
    if not zones:
        return []  # unknown region is reported once, at gpu-cluster:region
    for j, zone in enumerate(pool.zones):
        if zone not in zones:
            issues.append(_err(p("zones", j), f"not a zone of region {region}", zone, allowed_list(zones),
                               choice_fix("the zone", zone, zones)))
        elif cloud == Cloud.AWS and cluster is not None and zone not in cluster.subnets:
            issues.append(_err(p("zones", j), "no subnet is declared for this Availability Zone", zone,
                               allowed_list(sorted(cluster.subnets)) or "none declared",
                               f"add cluster.subnets.{zone}: <subnet-id>, or use a zone that has one"))
    if len(set(pool.zones)) != len(pool.zones):
        issues.append(_err(p("zones"), "a zone is listed twice", pool.zones, "each zone once", "remove the duplicate"))
    for prefix, avail in ((k[1], v) for k, v in cat.zone_availability.items() if k[0] == cloud):
        if pool.machine_type.startswith(prefix):
            missing = [z for z in pool.zones if z in zones and z not in avail.zones]
            if missing:
                issues.append(_warn(p("zones"), f"the catalog (as of {avail.as_of}) did not see {pool.machine_type} "
                                    f"in {', '.join(missing)}", pool.zones,
                                    allowed_list(z for z in avail.zones if z in zones) or f"no zone of {region}",
                                    "check `gcloud compute machine-types list --filter=name=" + pool.machine_type
                                    + "`; capacity may have moved since"))
    return issues


def _check_price(cat: Catalog, cloud: Cloud, region: str, pool: NodePool, machine, p) -> list[SpecIssue]:
    if not cat.zones(cloud, region) or cat.node_price(machine, region, pool.capacity.type) is not None:
        return []
    kind = "spot" if pool.capacity.type == CapacityType.SPOT else "on-demand"
    elsewhere = cat.priced_regions(machine, pool.capacity.type)
    if elsewhere:
        allowed = f"regions with {'a' if kind == 'spot' else 'an'} {kind} price: {allowed_list(elsewhere)}"
    else:
        other = CapacityType.ON_DEMAND if pool.capacity.type == CapacityType.SPOT else CapacityType.SPOT
        other_regions = cat.priced_regions(machine, other)
        allowed = f"no region has {'a' if kind == 'spot' else 'an'} {kind} price" + (
            f"; {other.value} is priced in {allowed_list(other_regions)}" if other_regions
            else f"; the catalog has no price for {pool.machine_type} at all")
    reservation = " (reservations are billed at the on-demand rate)" \
        if pool.capacity.type == CapacityType.RESERVATION else ""
    return [_err(p("machineType"), f"no {kind} price for {pool.machine_type} in {region}{reservation}; refusing to "
                 "guess (unknown is not $0)", pool.machine_type, allowed,
                 "add a dated, sourced row to catalog/data/prices.csv, or pick another region, capacity type or "
                 "machine type")]


def _check_multi_node(cloud: Cloud, pool: NodePool, machine, p) -> list[SpecIssue]:
    issues = []
    if len(pool.zones) != 1:
        what = "compact placement" if cloud == Cloud.GCP else "a cluster placement group and EFA"
        issues.append(_err(p("zones"), f"a multi-node pool needs exactly one zone ({what} cannot span zones)",
                           pool.zones, "a single zone", f"keep one zone, e.g. zones: [{pool.zones[0]}]"))
    if cloud == Cloud.GCP and pool.max_nodes > GKE_COMPACT_PLACEMENT_MAX_NODES:
        issues.append(_err(p("maxNodes"), "more nodes than one GKE compact placement group holds", pool.max_nodes,
                           f"1 … {GKE_COMPACT_PLACEMENT_MAX_NODES}",
                           "split the pool into several multi-node pools"))
    if cloud == Cloud.AWS and machine is not None:
        if machine.efa_interfaces == 0:
            issues.append(_err(p("multiNode"), f"{pool.machine_type} has no EFA, so multi-node jobs would run over "
                               "plain TCP", True, "an EFA-capable type: p4d/p4de/p5/p5e/p5en/p6-b200, g5/g6/g6e ≥ "
                               "8xlarge", "pick an EFA-capable instance type, or set multiNode: false"))
        elif machine.efa_interfaces is None or not machine.efa_confirmed:
            issues.append(_warn(p("multiNode"), f"no stored source confirms EFA on {pool.machine_type}; "
                                "assuming 1 interface", True, fix="check `aws ec2 describe-instance-types "
                                f"--instance-types {pool.machine_type}` (NetworkInfo.EfaInfo)"))
    cap = pool.capacity
    if cloud == Cloud.AWS and cap.type == CapacityType.RESERVATION and cap.placement_group is None \
            and cap.reservation_kind != AwsReservationKind.CAPACITY_BLOCK:
        issues.append(_warn(p("capacity", "placementGroup"), "a multi-node ODCR pool gets no new placement group (a "
                            "reservation serves only the placement group it was created in, if any), so its nodes "
                            "are close together only if the reservation was created in a cluster placement group",
                            None, "the name of the cluster placement group the reservation was created in",
                            "set capacity.placementGroup to it (PlacementGroupArn in `aws ec2 "
                            f"describe-capacity-reservations --capacity-reservation-ids {cap.reservation}`), or leave "
                            "it out if the reservation has none"))
    return issues


def check_pool_names(pools: Iterable[tuple[int, NodePool]]) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    seen: dict[str, int] = {}
    for i, pool in pools:
        norm = pool.name.lower().replace("_", "-")
        if norm in seen:
            issues.append(_err(path_of("nodePools", i, "name"), f"duplicate pool name (same as nodePools[{seen[norm]}])",
                               pool.name, "unique pool names", "rename one of the pools"))
        else:
            seen[norm] = i
    return issues
