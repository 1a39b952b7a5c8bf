"""A pool's zones: in the region, backed by an EKS subnet, listed once, and offering the machine type.

Zone availability is a fact from the catalog where its sources list the zones (GCP, per machine type or attached
GPU): a zone outside that list is an error, and ``zoneAvailabilityOverride`` turns it into a warning for zones the
user has capacity in. AWS zone names are not sourced (the sources list AZ IDs; a name maps to an ID per account), so
any ``<region><letter>`` zone of a catalog region is accepted. Where nothing is known (EKS: AWS publishes no per-zone
table) the offline preview warns instead (``preview/advice.py``): it is advice about the deploy, not a spec error.
"""

from __future__ import annotations

import re

from catalog import Catalog, Cloud, MachineType
from stacks.spec.cluster import ClusterSpec
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues, allowed_list, choice_fix

AZ_ID = re.compile(r"[a-z]{2,5}\d-az\d+")
"""An AWS AZ ID such as ``use1-az4``."""

OFFERINGS_COMMAND = {
    Cloud.GCP: "gcloud compute machine-types list --filter=name={machine} --zones={zones}",
    Cloud.AWS: "aws ec2 describe-instance-type-offerings --location-type availability-zone "
    "--filters Name=instance-type,Values={machine} --region {region}",
}
"""How a user checks which zones offer a machine to their account."""


def zone_choices(cat: Catalog, cloud: Cloud, region: str) -> str:
    """The ``allowed`` text for a zone of the region: GCP's listed zones; AWS's name pattern (``Catalog.is_zone``)."""
    if cloud == Cloud.AWS:
        return (
            f"{region} followed by one letter ({region}a, {region}b, …; which AZ a letter names depends on the "
            f"account: aws ec2 describe-availability-zones --region {region})"
        )
    return allowed_list(cat.zones(cloud, region))


def aws_zone_fix(region: str, zone: str) -> str:
    """An AZ ID (``use1-az4``) is the usual mistake: it is the same in every account, but resources take the name."""
    if AZ_ID.fullmatch(zone):
        return (
            f"write the zone's name, not its AZ ID: aws ec2 describe-availability-zones --region {region} "
            f"--zone-ids {zone} prints it"
        )
    return f"write the zone as {region} plus its letter, e.g. {region}a"


def check_zones(
    pool: Issues,
    cat: Catalog,
    cloud: Cloud,
    region: str,
    cluster: ClusterSpec | None,
    spec: NodePool,
    machine: MachineType | None,
) -> None:
    if not cat.has_region(cloud, region):
        return  # unknown region is reported once, at gpu-cluster:region
    node_subnets = cluster.node_subnets if cluster is not None else {}
    for j, zone in enumerate(spec.zones):
        if cat.is_local_zone(cloud, region, zone):
            if cluster is not None and zone not in node_subnets:
                pool.error(
                    ("zones", j),
                    "a Local Zone needs a node subnet there (the control plane never gets it)",
                    zone,
                    allowed=allowed_list(sorted(node_subnets)) or "none declared",
                    fix=f"add cluster.nodeSubnets.{zone}: <subnet-id>",
                )
        elif not cat.is_zone(cloud, region, zone):
            fix = (
                aws_zone_fix(region, zone)
                if cloud == Cloud.AWS
                else choice_fix("the zone", zone, cat.zones(cloud, region))
            )
            pool.error(
                ("zones", j), f"not a zone of region {region}", zone, allowed=zone_choices(cat, cloud, region), fix=fix
            )
        elif cloud == Cloud.AWS and cluster is not None and zone not in {**cluster.subnets, **node_subnets}:
            pool.error(
                ("zones", j),
                "no subnet is declared for this Availability Zone",
                zone,
                allowed=allowed_list(sorted({**cluster.subnets, **node_subnets})) or "none declared",
                fix=f"add cluster.subnets.{zone} or cluster.nodeSubnets.{zone}: <subnet-id>, or use a zone "
                "that has one",
            )
    if len(set(spec.zones)) != len(spec.zones):
        pool.error("zones", "a zone is listed twice", spec.zones, allowed="each zone once", fix="remove the duplicate")
    declared = _check_override(pool, spec)
    if machine is not None:
        zones = [z for z in spec.zones if cat.is_zone(cloud, region, z) or cat.is_local_zone(cloud, region, z)]
        _check_availability(pool, cat, cloud, region, spec, machine, zones, declared)


def _check_override(pool: Issues, spec: NodePool) -> set[str]:
    override = spec.zone_availability_override
    if override is None:
        return set()
    scope = pool.at("zoneAvailabilityOverride")
    for k, zone in enumerate(override.zones):
        if zone not in spec.zones:
            scope.error(
                ("zones", k),
                "an override names a zone the pool does not use",
                zone,
                allowed=allowed_list(spec.zones),
                fix="list only zones of this pool's zones",
            )
    if not override.reason.strip():
        scope.error(
            "reason",
            "an override needs a reason",
            override.reason,
            allowed="why you know the capacity is there (reservation, support case)",
            fix="write the reason",
        )
    return set(override.zones) & set(spec.zones)


def _check_availability(
    pool: Issues,
    cat: Catalog,
    cloud: Cloud,
    region: str,
    spec: NodePool,
    machine: MachineType,
    zones: list[str],
    declared: set[str],
) -> None:
    what = spec.machine_type if not machine.attachable else f"{spec.machine_type} with {machine.accelerator}"
    reason = spec.zone_availability_override.reason if spec.zone_availability_override else ""
    avail = cat.offered_zones(cloud, machine)
    if avail is None:
        return  # nothing known (EKS): the offline preview warns, see preview/advice.py unknown_zone_availability
    missing = [z for z in zones if z not in avail.zones]
    offered = [z for z in avail.zones if z.rsplit("-", 1)[0] == region] or None
    allowed = (
        allowed_list(offered)
        if offered
        else f"no zone of {region}; the sources saw it in "
        + allowed_list(sorted({z.rsplit("-", 1)[0] for z in avail.zones}))
    )
    for zone in missing:
        j = spec.zones.index(zone)
        if zone in declared:
            pool.warn(
                ("zones", j),
                f"{what} is not listed in {zone} by the catalog's sources (as of {avail.as_of}); "
                f"declared available by zoneAvailabilityOverride: {reason}",
                zone,
                allowed=allowed,
                fix="keep the override only while the capacity is yours",
            )
        else:
            pool.error(
                ("zones", j),
                f"{what} is not offered in {zone} (catalog sources as of {avail.as_of})",
                zone,
                allowed=allowed,
                fix="use a listed zone; if you do have capacity there (a reservation), "
                f"declare zoneAvailabilityOverride: {{zones: [{zone}], reason: ...}}",
            )
