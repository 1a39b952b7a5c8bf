"""Spec errors in how a pool gets its nodes: reservations, the EKS placement group, multi-node placement and EFA
(``stacks/validate/pool_capacity.py``).

Each row edits a baseline of ``tests/support/spec/cases.py`` and pins every error a user reads, exactly.
"""

from __future__ import annotations

from tests.support.spec.cases import case

CASES = [
    # -- capacity --------------------------------------------------------------------------------------------------
    case(
        "gke",
        {"nodePools[0].capacity": {"type": "reservation"}},
        """
        error: gpu-cluster:nodePools[0].capacity.reservation: pool 'h100': a reservation pool needs the reservation to consume
          allowed:  the GKE specific reservation name
          fix:      set capacity.reservation
        """,
        id="gke-reservation-without-name",
    ),
    case(
        "eks",
        {"nodePools[0].capacity": {"type": "reservation"}},
        """
        error: gpu-cluster:nodePools[0].capacity.reservation: pool 'h100': a reservation pool needs the reservation to consume
          allowed:  the capacity reservation ID (cr-…)
          fix:      set capacity.reservation
        """,
        id="eks-reservation-without-id",
    ),
    case(
        "gke",
        {"nodePools[0].capacity": {"type": "spot", "reservation": "h100-res"}},
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'h100': reservation settings are given but capacity.type is spot
          received: 'spot'
          allowed:  reservation
          fix:      set capacity.type: reservation, or drop the reservation fields (spot nodes cannot consume a reservation)
        """,
        id="reservation-fields-with-spot",
    ),
    case(
        "eks",
        {"nodePools[0].capacity": {"type": "reservation", "reservation": "h100-block"}},
        """
        error: gpu-cluster:nodePools[0].capacity.reservation: pool 'h100': not an EC2 capacity reservation ID
          received: 'h100-block'
          allowed:  cr- followed by 8 or 17 hex digits
          fix:      copy the ID from `aws ec2 describe-capacity-reservations` (capacity blocks have cr- IDs too)
        """,
        id="aws-reservation-id-malformed",
    ),
    case(
        "gke",
        {"nodePools[0].capacity": {"type": "reservation", "reservation": "r1", "reservationKind": "capacity-block"}},
        """
        error: gpu-cluster:nodePools[0].capacity.reservationKind: pool 'h100': reservationKind is an EKS setting
          received: 'capacity-block'
          fix:      remove capacity.reservationKind
        """,
        id="eks-reservation-kind-on-gcp",
    ),
    # -- reservation placement (EKS) -------------------------------------------------------------------------------
    case(
        "gke",
        {"nodePools[0].capacity": {"type": "reservation", "reservation": "h100-res", "placementGroup": "pg-a"}},
        """
        error: gpu-cluster:nodePools[0].capacity.placementGroup: pool 'h100': placementGroup is an EKS setting
          received: 'pg-a'
          fix:      remove capacity.placementGroup (GKE: multiNode: true adds compact placement)
        """,
        id="placement-group-on-gke",
    ),
    case(
        "eks",
        {
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "reservationKind": "capacity-block",
                "placementGroup": "train-pg",
            }
        },
        """
        error: gpu-cluster:nodePools[0].capacity.placementGroup: pool 'h100': a capacity block takes no placement group: its instances are already placed close together in an EC2 UltraCluster
          received: 'train-pg'
          allowed:  omitted for capacity blocks
          fix:      remove capacity.placementGroup
        """,
        id="placement-group-on-capacity-block",
    ),
    case(
        "eks",
        {"nodePools[0].capacity": {"placementGroup": "train-pg"}},
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'h100': reservation settings are given but capacity.type is on-demand
          received: 'on-demand'
          allowed:  reservation
          fix:      set capacity.type: reservation, or drop the reservation fields (spot nodes cannot consume a reservation)
        """,
        id="placement-group-without-reservation",
    ),
    case(
        "eks",
        {
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "placementGroup": "pg-0123456789abcdef0",
            }
        },
        """
        error: gpu-cluster:nodePools[0].capacity.placementGroup: pool 'h100': this is a placement group ID; give its name
          received: 'pg-0123456789abcdef0'
          allowed:  the placement group name (1-255 ASCII characters)
          fix:      copy GroupName from `aws ec2 describe-placement-groups --group-ids pg-0123456789abcdef0`
        """,
        id="placement-group-id-not-name",
    ),
    # -- multi-node ------------------------------------------------------------------------------------------------
    case(
        "gke",
        {"nodePools[0].multiNode": True, "nodePools[0].zones": ["us-central1-a", "us-central1-b"]},
        """
        error: gpu-cluster:nodePools[0].zones: pool 'h100': a multi-node pool needs exactly one zone (compact placement cannot span zones)
          received: ["us-central1-a", "us-central1-b"]
          allowed:  a single zone
          fix:      keep one zone, e.g. zones: [us-central1-a]
        """,
        id="gke-multi-node-two-zones",
    ),
    case(
        "eks",
        {"nodePools[0].multiNode": True, "nodePools[0].zones": ["us-east-1a", "us-east-1b"]},
        """
        error: gpu-cluster:nodePools[0].zones: pool 'h100': a multi-node pool needs exactly one zone (a cluster placement group and EFA cannot span zones)
          received: ["us-east-1a", "us-east-1b"]
          allowed:  a single zone
          fix:      keep one zone, e.g. zones: [us-east-1a]
        """,
        id="eks-multi-node-two-zones",
    ),
    case(
        "gke",
        {"nodePools[0].multiNode": True, "nodePools[0].maxNodes": 151},
        """
        error: gpu-cluster:nodePools[0].maxNodes: pool 'h100': more nodes than one GKE compact placement group holds
          received: 151
          allowed:  1 … 150
          fix:      split the pool into several multi-node pools
        """,
        id="gke-multi-node-over-150",
    ),
    case(
        "eks",
        {"nodePools[0].multiNode": True, "nodePools[0].machineType": "p3.16xlarge"},
        """
        error: gpu-cluster:nodePools[0].multiNode: pool 'h100': p3.16xlarge has no EFA, so multi-node jobs would run over plain TCP
          received: true
          allowed:  an EFA-capable type: p4d/p4de/p5/p5e/p5en/p6-b200, g5/g6/g6e ≥ 8xlarge
          fix:      pick an EFA-capable instance type, or set multiNode: false
        """,
        id="eks-multi-node-p3-no-efa",
    ),
    case(
        "eks",
        {"nodePools[0].multiNode": True, "nodePools[0].machineType": "g5.xlarge"},
        """
        error: gpu-cluster:nodePools[0].multiNode: pool 'h100': g5.xlarge has no EFA, so multi-node jobs would run over plain TCP
          received: true
          allowed:  an EFA-capable type: p4d/p4de/p5/p5e/p5en/p6-b200, g5/g6/g6e ≥ 8xlarge
          fix:      pick an EFA-capable instance type, or set multiNode: false
        """,
        id="eks-multi-node-g5-xlarge-no-efa",
    ),
]
