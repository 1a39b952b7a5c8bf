"""How a pool's nodes are bought (``nodePools[].capacity``): on-demand, spot, flex-start or a reservation, and what a
reserved pool declares about its reservation: its size, and for an EC2 Capacity Block the window it was bought for and
the upfront fee paid. Shape only; the rules (AWS's block durations, a window in the past) live in
``stacks/validate/capacity_block.py`` and the derived window in ``stacks/plan/capacity_block.py``."""

from __future__ import annotations

import datetime as dt
from enum import Enum

from pydantic import Field

from catalog import CapacityType
from stacks.spec.model_base import SpecModel


class CapacityWindow(SpecModel):
    start: dt.datetime = Field(
        description=(
            "When the block starts, ISO 8601 with its time zone, e.g. `2027-01-04T11:30:00Z` (the `StartDate` of "
            "`aws ec2 describe-capacity-reservations`). The node group scales up at this time."
        )
    )
    duration_hours: int | None = Field(
        None,
        ge=1,
        description=(
            "The block's length in hours (AWS sells 1-14 days in 1-day steps, then 7-day steps up to 182 days). Give "
            "this or `end`."
        ),
    )
    end: dt.datetime | None = Field(
        None,
        description=(
            "When the block ends (its `EndDate`; every block ends at 11:30 UTC). Give this or `durationHours`. The node "
            "group scales to 0 at least 30 minutes before it: EC2 starts terminating the block's instances then."
        ),
    )


class AwsReservationKind(str, Enum):
    CAPACITY_RESERVATION = "capacity-reservation"
    CAPACITY_BLOCK = "capacity-block"


class Capacity(SpecModel):
    type: CapacityType = Field(
        CapacityType.ON_DEMAND,
        description=(
            "`on-demand` (default), `spot`, `reservation`, or `flex-start` (GKE only: Dynamic Workload Scheduler "
            "capacity at DWS prices, nodes created for pending work from 0 and deleted after maxRunHours)."
        ),
    )
    reservation: str | None = Field(
        None,
        description=(
            "Required for `reservation`: the GKE specific reservation name, or the EC2 capacity reservation / "
            "capacity block ID (`cr-…`)."
        ),
    )
    reservation_project: str | None = Field(
        None, description=("GKE only: project that owns a shared reservation. Omitted: the stack's project.")
    )
    reservation_kind: AwsReservationKind | None = Field(
        None,
        description=(
            "EKS only: `capacity-reservation` (ODCR, default) or `capacity-block` (EC2 Capacity Blocks for ML)."
        ),
    )
    reservation_block: str | None = Field(
        None,
        description=(
            "GKE specific reservation only: the reservation block the pool's nodes come from (block targeting: the "
            "node pool consumes `<reservation>/reservationBlocks/<block>`, so every node lands in that block, e.g. the "
            "racks of one A4X reservation block). Omitted: any block of the reservation."
        ),
    )
    ultraserver_type: str | None = Field(
        None,
        description=(
            "EKS capacity blocks of UltraServer-only machines (`p6e-gb200.36xlarge`): the UltraServer type the block "
            "reserves, `u-p6e-gb200x72` (18 instances, one 72-GPU NVLink domain) or `u-p6e-gb200x36` (9 instances). "
            "reservedNodes must be whole UltraServers. Required for those machines."
        ),
    )
    placement_group: str | None = Field(
        None,
        description=(
            "EKS ODCR only: the existing cluster placement group the capacity reservation was created in (its "
            "instances can only launch there). Omitted: no placement group; reservation pools never get a new one."
        ),
    )
    reserved_nodes: int | None = Field(
        None,
        ge=1,
        description=(
            "Reservation pools: how many nodes the reservation (or capacity block) holds. They are billed whether nodes "
            "run or not, so `$/h min` counts them. Omitted: maxNodes."
        ),
    )
    window: CapacityWindow | None = Field(
        None,
        description=(
            "EKS capacity blocks: the window the block was bought for. The node group is scaled up at its start and "
            "to 0 forty-five minutes before its end (EC2 terminates at thirty) by Auto Scaling scheduled actions. Omitted: no schedule (the group "
            "stays at 0 until pods ask the Cluster Autoscaler for nodes)."
        ),
    )
    upfront_fee_usd: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description=(
            "EKS capacity blocks: the upfront fee paid for the block, in USD (the offering's `UpfrontFee`). The cost "
            "table spreads it over the window. Omitted: the pool's cost is unknown and the budget policy fails closed."
        ),
    )
    roll_nodes: bool = Field(
        False,
        description=(
            "EKS capacity blocks: let this `pulumi up` roll launch-template and AMI changes into the node group. EKS "
            "upgrades a capacity-block node group only at size 0, so by default (false) such changes are recorded in "
            "the launch template but not rolled; set true for one `pulumi up` while the group is at size 0 (outside "
            "its window), then back to false."
        ),
    )
    placement_policy: str | None = Field(
        None,
        description=(
            "GKE specific reservation of a multi-node pool only: the compact placement policy (Compute Engine resource "
            "policy, same project and region) the reservation was created with. The pool's compact placement then names "
            "it (`placement_policy {type: COMPACT, policy_name}`) instead of asking GKE for a new placement group, "
            "which a reservation with its own placement policy cannot serve. Omitted: plain COMPACT."
        ),
    )
    max_run_hours: int | None = Field(
        None,
        ge=1,
        description=(
            "GKE flex-start only: hours a node may run before GKE deletes it (node pool maxRunDuration; GKE allows at "
            "most 168, seven days). Omitted: 168."
        ),
    )
    queued_provisioning: bool | None = Field(
        None,
        description=(
            "Nodes come only for workloads Kueue admitted, all of a gang's nodes at once or none: Kueue creates a "
            "ProvisioningRequest per workload through a ProvisioningRequest AdmissionCheck on the queues with quota here "
            "(GKE: queued provisioning on flex-start pools, class `queued-provisioning.gke.io`; EKS: the Cluster "
            "Autoscaler's `best-effort-atomic-scale-up.autoscaling.x-k8s.io`). Lets topology-aware placement use the "
            "autoscaled pool. Needs minNodes 0 and `workload: kubeflow`. Omitted: true on flex-start pools, else false."
        ),
    )
    reservations: list[str] | None = Field(
        None,
        description=(
            "EKS capacity blocks of more than one UltraServer: one capacity block ID (`cr-…`) per UltraServer (each "
            "UltraServer block is its own reservation), instead of `reservation`. gpu-cluster creates one managed "
            "node group per UltraServer (`<pool>-us-0`, `<pool>-us-1`, …), each with its own launch template "
            "targeting its block and its own scheduled scale actions; all carry the pool's label, so Kueue, Slurm "
            "and the policies see one pool. Required when reservedNodes spans several UltraServers. The blocks share the "
            "pool's `window` and `upfrontFeeUsd` (split evenly): list only blocks bought together, with the same "
            "StartDate and EndDate; blocks with other dates go in separate pools."
        ),
    )
    reservation_group: str | None = Field(
        None,
        description=(
            "Not supported: an EKS managed node group on capacity blocks needs the block's reservation ID in its "
            "launch template, and a Capacity Reservation Resource Group ARN there is not used (cloud limit "
            "`eks-capacity-block-mng-reservation-id`); list the blocks in `reservations` instead. Refused when set."
        ),
    )
