"""How a pool gets its nodes: capacity type and reservations, the EKS placement group, multi-node placement.

``pool`` is the pool's scope (``issues.pool(i, name)``), so every message names the pool.
"""

from __future__ import annotations

import re

from catalog import CapacityType, Cloud, MachineType
from stacks.spec.capacity import AwsReservationKind
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues

GKE_COMPACT_PLACEMENT_MAX_NODES = 150
"""Conservative GKE compact-placement group size (newer GKE versions document 1,500; shared facts §3)."""
EC2_CAPACITY_RESERVATION_ID = re.compile(r"cr-[0-9a-f]{8,17}")
EC2_PLACEMENT_GROUP_ID = re.compile(r"pg-[0-9a-f]{8,17}")
EC2_PLACEMENT_GROUP_NAME = re.compile(r"[ -~]{1,255}")
GCE_RESOURCE_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")


def check_capacity(pool: Issues, cloud: Cloud, spec: NodePool, rack_scale: bool = False) -> None:
    """``rack_scale``: a GB200 NVL72 machine, whose GKE pools get gpu-cluster's own workload policy as placement."""
    cap, capacity = spec.capacity, pool.at("capacity")
    if (
        cap.type == CapacityType.RESERVATION
        and not cap.reservation
        and not cap.reservations
        and not cap.reservation_group
    ):
        what = "GKE specific reservation name" if cloud == Cloud.GCP else "capacity reservation ID (cr-…)"
        capacity.error(
            "reservation",
            "a reservation pool needs the reservation to consume",
            allowed=f"the {what}",
            fix="set capacity.reservation",
        )
    if cap.type != CapacityType.RESERVATION and (
        cap.reservation
        or cap.reservation_project
        or cap.reservation_kind
        or cap.placement_group
        or cap.placement_policy
        or cap.reserved_nodes is not None
        or cap.reservation_block
        or cap.reservation_group
        or cap.reservations
    ):
        capacity.error(
            "type",
            f"reservation settings are given but capacity.type is {cap.type.value}",
            cap.type.value,
            allowed="reservation",
            fix="set capacity.type: reservation, or drop the "
            "reservation fields (spot nodes cannot consume a reservation)",
        )
    if not rack_scale and (cap.reservations or cap.reservation_group):
        field = "reservations" if cap.reservations else "reservationGroup"
        capacity.error(
            field,
            f"{field} is for pools of several UltraServer capacity blocks (EKS P6e-GB200)",
            cap.reservations or cap.reservation_group,
            fix=f"remove capacity.{field} (one capacity reservation: capacity.reservation)",
        )
    if cloud == Cloud.AWS and cap.reservation_project:
        capacity.error(
            "reservationProject",
            "reservationProject is a GKE setting",
            cap.reservation_project,
            fix="remove capacity.reservationProject",
        )
    if cloud == Cloud.GCP and cap.reservation_kind:
        capacity.error(
            "reservationKind",
            "reservationKind is an EKS setting",
            cap.reservation_kind.value,
            fix="remove capacity.reservationKind",
        )
    if cap.placement_group is not None:
        _check_placement_group(capacity.at("placementGroup"), cloud, spec, cap.placement_group)
    if cap.placement_policy is not None:
        _check_placement_policy(capacity.at("placementPolicy"), cloud, spec, cap.placement_policy)
    elif (
        cloud == Cloud.GCP
        and cap.type == CapacityType.RESERVATION
        and spec.multi_node
        and cap.reservation
        and not rack_scale
    ):
        capacity.warn(
            "placementPolicy",
            f"if reservation '{cap.reservation}' was created with a compact placement "
            "policy, GKE places its VMs by that policy and this pool's request for a new compact placement "
            "fails (xpk b/487148770: A3 Mega node pools on such reservations); the pool must name it",
            allowed="the reservation's placement policy name (`gcloud compute reservations describe "
            f"{cap.reservation}`: resourcePolicies), or omitted when it has none",
            fix="set capacity.placementPolicy to the reservation's policy, or leave it unset if the "
            "reservation has no resourcePolicies",
        )
    if (
        cloud == Cloud.AWS
        and cap.type == CapacityType.RESERVATION
        and cap.reservation
        and not EC2_CAPACITY_RESERVATION_ID.fullmatch(cap.reservation)
    ):
        capacity.error(
            "reservation",
            "not an EC2 capacity reservation ID",
            cap.reservation,
            allowed="cr- followed by 8 or 17 hex digits",
            fix="copy the ID from `aws ec2 describe-capacity-reservations` (capacity blocks have cr- IDs too)",
        )
    if cloud == Cloud.GCP and cap.type == CapacityType.RESERVATION and spec.upgrade.max_surge > 0:
        pool.warn(
            ("upgrade", "maxSurge"),
            "a surge node needs spare reservation capacity; an exact-size reservation blocks the upgrade",
            spec.upgrade.max_surge,
            allowed="0",
            fix="use maxSurge: 0, maxUnavailable: 1 unless the reservation has spare nodes",
        )


def _check_placement_group(group: Issues, cloud: Cloud, spec: NodePool, name: str) -> None:
    """``capacity.placementGroup``: the cluster placement group an EKS ODCR was created in. A targeted reservation
    created in a placement group serves only instances launched into that group ("Use Capacity Reservations with
    cluster placement groups", docs.aws.amazon.com/AWSEC2/latest/UserGuide/cr-cpg.html); Capacity Blocks are placed
    close together in EC2 UltraClusters already (EC2 API reference, CapacityBlock)."""
    cap = spec.capacity
    if cloud == Cloud.GCP:
        group.error(
            None,
            "placementGroup is an EKS setting",
            name,
            fix="remove capacity.placementGroup (GKE: multiNode: true adds compact placement)",
        )
    elif cap.type != CapacityType.RESERVATION:
        return  # reported once, as reservation settings on a non-reservation pool
    elif cap.reservation_kind == AwsReservationKind.CAPACITY_BLOCK:
        group.error(
            None,
            "a capacity block takes no placement group: its instances are already placed close "
            "together in an EC2 UltraCluster",
            name,
            allowed="omitted for capacity blocks",
            fix="remove capacity.placementGroup",
        )
    elif EC2_PLACEMENT_GROUP_ID.fullmatch(name):
        group.error(
            None,
            "this is a placement group ID; give its name",
            name,
            allowed="the placement group name (1-255 ASCII characters)",
            fix="copy GroupName from `aws ec2 describe-placement-groups --group-ids " + name + "`",
        )
    elif not EC2_PLACEMENT_GROUP_NAME.fullmatch(name):
        group.error(
            None,
            "not a valid EC2 placement group name",
            name,
            allowed="1-255 printable ASCII characters",
            fix="copy the name from the reservation's PlacementGroupArn (`aws ec2 describe-capacity-reservations`)",
        )


def _check_placement_policy(policy: Issues, cloud: Cloud, spec: NodePool, name: str) -> None:
    """``capacity.placementPolicy``: the compact placement policy a GKE specific reservation was created with. The
    node pool references it by name; pulumi-gcp 10.2.0 ``NodePoolPlacementPolicy.policy_name``: "the name of a custom
    resource policy ... must be in the same project and region as the node pool. If not found, InvalidArgument"."""
    cap = spec.capacity
    if cloud == Cloud.AWS:
        policy.error(
            None,
            "placementPolicy is a GKE setting",
            name,
            fix="remove capacity.placementPolicy (EKS: capacity.placementGroup names the ODCR's group)",
        )
    elif cap.type != CapacityType.RESERVATION:
        return  # reported once, as reservation settings on a non-reservation pool
    elif not spec.multi_node:
        policy.error(
            None,
            "a placement policy is compact placement, which gpu-cluster gives multi-node pools only",
            name,
            allowed="multiNode: true with placementPolicy, or no placementPolicy",
            fix="set multiNode: true (one zone, compact placement naming this policy), or remove "
            "capacity.placementPolicy",
        )
    elif cap.reservation_project:
        policy.error(
            None,
            "GKE looks the placement policy up in the node pool's project and region, but the "
            f"reservation is shared from project '{cap.reservation_project}'",
            name,
            allowed="a reservation of the stack's project (reservationProject unset) with placementPolicy",
            fix="create the reservation and its placement policy in this project, or remove capacity.placementPolicy",
        )
    elif not GCE_RESOURCE_NAME.fullmatch(name):
        policy.error(
            None,
            "not a Compute Engine resource policy name",
            name,
            allowed="the policy's name (lower-case letters, digits, '-'; 1-63 characters), not its URL",
            fix="use the last part of the reservation's resourcePolicies value",
        )


def check_multi_node(pool: Issues, cloud: Cloud, spec: NodePool, machine: MachineType | None) -> None:
    """Named topology invariants of a multi-node pool: one zone, one placement group's size, a fabric (EFA)."""
    if len(spec.zones) != 1:
        what = "compact placement" if cloud == Cloud.GCP else "a cluster placement group and EFA"
        pool.error(
            "zones",
            f"a multi-node pool needs exactly one zone ({what} cannot span zones)",
            spec.zones,
            allowed="a single zone",
            fix=f"keep one zone, e.g. zones: [{spec.zones[0]}]",
        )
    if cloud == Cloud.GCP and spec.max_nodes > GKE_COMPACT_PLACEMENT_MAX_NODES:
        pool.error(
            "maxNodes",
            "more nodes than one GKE compact placement group holds",
            spec.max_nodes,
            allowed=f"1 … {GKE_COMPACT_PLACEMENT_MAX_NODES}",
            fix="split the pool into several multi-node pools",
        )
    if cloud == Cloud.AWS and machine is not None:
        if machine.efa_interfaces == 0:
            pool.error(
                "multiNode",
                f"{spec.machine_type} has no EFA, so multi-node jobs would run over plain TCP",
                True,
                allowed="an EFA-capable type: p4d/p4de/p5/p5e/p5en/p6-b200, g5/g6/g6e ≥ 8xlarge",
                fix="pick an EFA-capable instance type, or set multiNode: false",
            )
        elif machine.efa_interfaces is None or not machine.efa_confirmed:
            pool.warn(
                "multiNode",
                f"no stored source confirms EFA on {spec.machine_type}; assuming 1 interface",
                True,
                fix="check `aws ec2 describe-instance-types "
                f"--instance-types {spec.machine_type}` (NetworkInfo.EfaInfo)",
            )
    cap = spec.capacity
    if (
        cloud == Cloud.AWS
        and cap.type == CapacityType.RESERVATION
        and cap.placement_group is None
        and cap.reservation_kind != AwsReservationKind.CAPACITY_BLOCK
    ):
        pool.warn(
            ("capacity", "placementGroup"),
            "a multi-node ODCR pool gets no new placement group (a reservation "
            "serves only the placement group it was created in, if any), so its nodes are close together only "
            "if the reservation was created in a cluster placement group",
            allowed="the name of the cluster placement group the reservation was created in",
            fix="set capacity.placementGroup to it (PlacementGroupArn in `aws ec2 "
            f"describe-capacity-reservations --capacity-reservation-ids {cap.reservation}`), or leave it out "
            "if the reservation has none",
        )
