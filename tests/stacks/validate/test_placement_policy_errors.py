"""``capacity.placementPolicy``: the compact placement policy a GKE specific reservation was created with. Each row
pins the exact message; a multi-node reservation pool without it gets a warning (GKE cannot serve a new compact
placement from a reservation placed by its own policy). The rendered node pool: tests/components/gke/test_gke_fabric_node.py."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from tests.support.spec.edit import edit
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

GKE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-east4",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
    "nodePools": [
        {
            "name": "mega",
            "machineType": "a3-megagpu-8g",
            "zones": ["us-east4-a"],
            "maxNodes": 4,
            "minNodes": 4,
            "multiNode": True,
            "capacity": {"type": "reservation", "reservation": "mega-res", "placementPolicy": "mega-compact"},
        }
    ],
}
EKS: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {
        "name": "ml-train",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [
        {
            "name": "p5",
            "machineType": "p5.48xlarge",
            "zones": ["us-east-1a"],
            "maxNodes": 4,
            "multiNode": True,
            "capacity": {"type": "reservation", "reservation": "cr-0123456789abcdef0", "placementPolicy": "x"},
        }
    ],
}


def case(config: dict[str, Any], expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(config, textwrap.dedent(expected).strip("\n"), id=id)


ERRORS = [
    case(
        edit(GKE, "nodePools[0].multiNode", False),
        """
        error: gpu-cluster:nodePools[0].capacity.placementPolicy: pool 'mega': a placement policy is compact placement, which gpu-cluster gives multi-node pools only
          received: 'mega-compact'
          allowed:  multiNode: true with placementPolicy, or no placementPolicy
          fix:      set multiNode: true (one zone, compact placement naming this policy), or remove capacity.placementPolicy""",
        id="single-node",
    ),
    case(
        edit(GKE, "nodePools[0].capacity.reservationProject", "shared-capacity"),
        """
        error: gpu-cluster:nodePools[0].capacity.placementPolicy: pool 'mega': GKE looks the placement policy up in the node pool's project and region, but the reservation is shared from project 'shared-capacity'
          received: 'mega-compact'
          allowed:  a reservation of the stack's project (reservationProject unset) with placementPolicy
          fix:      create the reservation and its placement policy in this project, or remove capacity.placementPolicy""",
        id="shared-reservation",
    ),
    case(
        edit(GKE, "nodePools[0].capacity.placementPolicy", "projects/p/regions/us-east4/resourcePolicies/c"),
        """
        error: gpu-cluster:nodePools[0].capacity.placementPolicy: pool 'mega': not a Compute Engine resource policy name
          received: 'projects/p/regions/us-east4/resourcePolicies/c'
          allowed:  the policy's name (lower-case letters, digits, '-'; 1-63 characters), not its URL
          fix:      use the last part of the reservation's resourcePolicies value""",
        id="url",
    ),
    case(
        edit(GKE, "nodePools[0].capacity", {"type": "on-demand", "placementPolicy": "mega-compact"}),
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'mega': reservation settings are given but capacity.type is on-demand
          received: 'on-demand'
          allowed:  reservation
          fix:      set capacity.type: reservation, or drop the reservation fields (spot nodes cannot consume a reservation)""",
        id="no-reservation",
    ),
    case(
        EKS,
        """
        error: gpu-cluster:nodePools[0].capacity.placementPolicy: pool 'p5': placementPolicy is a GKE setting
          received: 'x'
          fix:      remove capacity.placementPolicy (EKS: capacity.placementGroup names the ODCR's group)""",
        id="eks",
    ),
]


@pytest.mark.parametrize("config,expected", ERRORS)
def test_bad_placement_policies_are_refused_with_the_exact_message(config, expected):
    with pytest.raises(SpecError) as exc:
        load_spec(config)
    assert [str(i) for i in exc.value.errors] == [expected]


def test_a_multi_node_reservation_pool_without_the_policy_is_warned_and_one_with_it_is_not():
    assert load_spec(GKE)[1] == []
    _, warnings = load_spec(edit(GKE, "nodePools[0].capacity.placementPolicy", None))
    assert [str(w) for w in warnings] == [
        textwrap.dedent("""\
        warning: gpu-cluster:nodePools[0].capacity.placementPolicy: pool 'mega': if reservation 'mega-res' was created with a compact placement policy, GKE places its VMs by that policy and this pool's request for a new compact placement fails (xpk b/487148770: A3 Mega node pools on such reservations); the pool must name it
          allowed:  the reservation's placement policy name (`gcloud compute reservations describe mega-res`: resourcePolicies), or omitted when it has none
          fix:      set capacity.placementPolicy to the reservation's policy, or leave it unset if the reservation has no resourcePolicies""")
    ]
