"""EKS pools of several UltraServer capacity blocks: one block ID per UltraServer in ``capacity.reservations``, each
its own managed node group. An EKS managed node group on capacity blocks needs the block's ``CapacityReservationId``
in its launch template (EKS user guide, "Create a managed node group with Capacity Blocks for ML": a create request
without it is rejected), and a Capacity Reservation Resource Group ARN there is not used (eksctl#7906), so
``capacity.reservationGroup`` is refused (row ``eks-capacity-block-mng-reservation-id``)."""

from __future__ import annotations

from catalog import Catalog, Cloud
from catalog.cloud_limits import cloud_limit
from stacks.plan.reservation import reserved_nodes
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues
from stacks.validate.pool_capacity import EC2_CAPACITY_RESERVATION_ID


def check_ultraserver_reservations(pool: Issues, cat: Catalog, cloud: Cloud, spec: NodePool) -> None:
    cap = spec.capacity
    if cap.reservation_group is not None:
        pool.error(
            ("capacity", "reservationGroup"),
            "an EKS managed node group cannot target a Capacity Reservation Resource Group: "
            f"{cloud_limit('eks-capacity-block-mng-reservation-id').cite()}",
            cap.reservation_group,
            allowed="capacity.reservations: one capacity block ID (cr-…) per UltraServer",
            fix="remove capacity.reservationGroup and list the blocks' IDs in capacity.reservations "
            "(`aws resource-groups list-group-resources --group <name>`)",
        )
    if cloud != Cloud.AWS:
        if cap.reservations:
            pool.error(
                ("capacity", "reservations"),
                "reservations is an EKS setting (GKE pools of several racks use racks)",
                cap.reservations,
                fix="remove capacity.reservations",
            )
        return
    for i, rid in enumerate(cap.reservations or []):
        if not EC2_CAPACITY_RESERVATION_ID.fullmatch(rid):
            pool.error(
                ("capacity", "reservations", i),
                "not an EC2 capacity block ID",
                rid,
                allowed="cr- followed by 8 or 17 hex digits",
                fix="copy the ID from `aws ec2 describe-capacity-reservations`",
            )
    if cap.reservations and len(set(cap.reservations)) != len(cap.reservations):
        pool.error(
            ("capacity", "reservations"),
            "a block is listed twice: each UltraServer's node group needs its own block",
            cap.reservations,
            fix="list each capacity block ID once",
        )
    if cap.reservations and cap.reservation:
        pool.error(
            ("capacity", "reservation"),
            "give either one reservation or the list of reservations, not both",
            cap.reservation,
            fix="move the ID into capacity.reservations, or remove capacity.reservations",
        )
    ultra = cat.ultraservers.get(cap.ultraserver_type or "")
    reserved = reserved_nodes(spec)
    if ultra is None or reserved is None:
        return
    blocks = reserved // ultra.instances
    listed = len(cap.reservations or []) or (1 if cap.reservation else 0)
    if blocks > 1 and listed != blocks:
        pool.error(
            ("capacity", "reservations"),
            f"{reserved} reserved nodes are {blocks} {ultra.ultraserver_type} UltraServers, each its own capacity "
            f"block, and an EKS node group targets one block by its ID: {cloud_limit('eks-capacity-block-mng-reservation-id').cite()}",
            cap.reservations or cap.reservation,
            allowed=f"capacity.reservations: {blocks} capacity block IDs (cr-…), one per UltraServer",
            fix="list the blocks' IDs in capacity.reservations (gpu-cluster creates one node group per UltraServer)",
        )
    elif listed > 1 and (spec.min_nodes % listed or spec.max_nodes % listed):
        pool.error(
            "maxNodes",
            f"the {listed} UltraServer node groups split minNodes/maxNodes evenly",
            f"{spec.min_nodes}/{spec.max_nodes}",
            allowed=f"multiples of {listed}",
            fix=f"set minNodes and maxNodes to multiples of {listed}",
        )
