"""Spec errors across concerns: every mistake reported at once in config order, warnings, valid variations.

The per-concern tables (exact text of every error) are ``test_top_level_errors.py``, ``test_cluster_errors.py``,
``test_pool_errors.py``, ``test_pool_catalog_errors.py`` and ``test_pool_capacity_errors.py``; their rows live in
``tests/support/spec/error_cases/``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.spec.edit import edits
from tests.support.spec.cases import (
    BASELINES,
    GKE_BASELINE,
    H100,
    POOL_KEYS,
    TOP_KEYS,
    assert_pool_issues_name_their_pool,
    case,
    config_for,
)
from tests.support.spec.error_cases import ALL
from stacks.validate.issues import SpecError, SpecIssue, sort_key
from stacks.validate.load import load_spec


def test_settings_lists_start_with_the_core_keys():
    assert TOP_KEYS.startswith("cloud, region, project, accountId, labels, cluster, nodePools")
    assert POOL_KEYS.startswith("name, machineType, accelerator, zones, minNodes, maxNodes, capacity, multiNode")


def test_case_table_is_large_and_ids_unique():
    ids = [c.id for c in ALL]
    assert len(ids) >= 30
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("base, changes, expected", ALL)
def test_every_pool_issue_names_its_pool(base, changes, expected):
    assert_pool_issues_name_their_pool(config_for(base, changes))


@pytest.mark.parametrize("base", sorted(BASELINES))
def test_baselines_are_valid_without_warnings(base):
    spec, warnings = load_spec(copy.deepcopy(BASELINES[base]))
    assert warnings == []
    assert spec.node_pools[0].name == "h100"


VALID_VARIATIONS = [
    pytest.param(
        "gke",
        {
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "h100-res",
                "reservationProject": "shared-reservations",
            },
            "nodePools[0].multiNode": False,
        },  # a multi-node one may need the reservation's policy
        id="gke-reservation",
    ),
    pytest.param(
        "gke",
        {
            "region": "us-east4",
            "nodePools[0].zones": ["us-east4-b"],
            "nodePools[0].machineType": "a3-ultragpu-8g",
            "nodePools[0].multiNode": True,
            "nodePools[0].maxNodes": 150,
        },
        id="gke-a3-ultra-multi-node-150",
    ),
    pytest.param(
        "gke",
        {
            "nodePools[0].machineType": "n1-standard-8",
            "nodePools[0].capacity": {"type": "spot"},
            "nodePools[0].accelerator": {"type": "nvidia-tesla-t4", "count": 2},
        },
        id="gke-n1-t4-spot",
    ),
    pytest.param("gke", {"nodePools[0].accelerator": {"type": "nvidia-h100-80gb", "count": 8}}, id="gke-count-matches"),
    pytest.param(
        "gke",
        {
            "cluster.authorizedNetworks": ["203.0.113.0/24"],
            "labels": {"team": "ml"},
            "nodePools[0].labels": {"example.com/team": "ml-platform"},
        },
        id="gke-labels-and-networks",
    ),
    pytest.param(
        "eks",
        {
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "reservationKind": "capacity-block",
                "upfrontFeeUsd": 21000,
                "window": {"start": "2030-01-07T11:30:00Z", "durationHours": 336},
            },
            "nodePools[0].multiNode": True,
            "accountId": "012345678901",
        },
        id="eks-capacity-block",
    ),
    pytest.param(
        "eks",
        {
            "nodePools[0].machineType": "p5e.48xlarge",
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "reservationKind": "capacity-block",
                "upfrontFeeUsd": 21000,
                "window": {"start": "2030-01-07T11:30:00Z", "durationHours": 336},
            },
        },
        id="eks-p5e-capacity-block-priced-by-its-fee",
    ),
    pytest.param(
        "eks",
        {
            "region": "us-east-2",
            "nodePools[0].machineType": "p5en.48xlarge",
            "nodePools[0].capacity": {"type": "spot"},
            "nodePools[0].zones": ["us-east-2a"],
            "cluster.subnets": {"us-east-2a": "subnet-0123456789abcdef0", "us-east-2b": "subnet-01234567"},
        },
        id="eks-p5en-spot-us-east-2",
    ),
    pytest.param(
        "eks",
        {
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "placementGroup": "p5-odcr-pg",
            },
            "nodePools[0].multiNode": True,
        },
        id="eks-odcr-in-its-placement-group",
    ),
    pytest.param(
        "eks",
        {"cluster.mode": "existing", "cluster.clusterAutoscaler": False, "cluster.kubernetesVersion": "1.33"},
        id="eks-existing-own-autoscaler-old-version",
    ),
]


@pytest.mark.parametrize("base, changes", VALID_VARIATIONS)
def test_valid_variations_pass_without_warnings(base, changes):
    spec, warnings = load_spec(config_for(base, changes))
    assert [str(w) for w in warnings] == []
    assert len(spec.node_pools) == 1


# -- every mistake at once ---------------------------------------------------------------------------------------
SEVERAL_MISTAKES = {
    "nodePool": [],  # unknown top-level key
    "cluster.name": "ML_Train",  # invalid cluster name
    "cluster.authorizedNetworks": ["0.0.0.0/0"],  # world-open API
    "nodePools[0].minNodes": 9,  # min > max
    "nodePools[0].zones": ["us-east4-a"],  # zone outside the region
    "nodePools[0].labels": {"team": "ML Platform"},  # bad label value
    "nodePools[1]": dict(H100, name="l4", machineType="g2-standard-5"),  # unknown machine type
    "nodePools[2]": dict(H100, name="h100"),  # duplicate pool name
}
SEVERAL_PATHS = [
    "gpu-cluster:cluster.authorizedNetworks[0]",
    "gpu-cluster:cluster.name",
    "gpu-cluster:nodePool",
    "gpu-cluster:nodePools[0].labels.team",
    "gpu-cluster:nodePools[0].minNodes",
    "gpu-cluster:nodePools[0].zones[0]",
    "gpu-cluster:nodePools[1].machineType",
    "gpu-cluster:nodePools[2].name",
]


def _several_mistakes() -> dict[str, Any]:
    cfg = copy.deepcopy(GKE_BASELINE)
    cfg["nodePools"] += [{}, {}]
    return edits(cfg, SEVERAL_MISTAKES)


def test_independent_mistakes_are_all_reported_in_one_error():
    with pytest.raises(SpecError) as first:
        load_spec(_several_mistakes())
    errors = first.value.errors
    assert len(errors) >= len(SEVERAL_MISTAKES)
    assert sorted({e.path for e in errors}) == sorted(SEVERAL_PATHS)
    assert [e.path for e in errors] == SEVERAL_PATHS  # config order: by path, list indexes numerically
    assert errors == sorted(errors, key=sort_key)

    with pytest.raises(SpecError) as second:
        load_spec(_several_mistakes())
    assert [str(e) for e in second.value.issues] == [str(e) for e in first.value.issues]
    assert str(second.value) == str(first.value)
    assert str(first.value).startswith(f"{len(errors)} configuration errors in the stack config:\n")


def test_list_indexes_sort_numerically():
    pools = [dict(H100, name=f"p{i}") for i in range(12)]
    pools[2]["minNodes"] = pools[10]["minNodes"] = 9
    with pytest.raises(SpecError) as info:
        load_spec(edits(GKE_BASELINE, {"nodePools": pools}))
    assert [e.path for e in info.value.errors] == [
        "gpu-cluster:nodePools[2].minNodes",
        "gpu-cluster:nodePools[10].minNodes",
    ]


# -- warnings ------------------------------------------------------------------------------------------------------
WARNING_CASES = [
    case(
        "gke",
        {
            "nodePools[0].capacity": {"type": "reservation", "reservation": "h100-res"},
            "nodePools[0].upgrade": {"maxSurge": 1},
            "nodePools[0].multiNode": False,
        },
        """
        warning: gpu-cluster:nodePools[0].upgrade.maxSurge: pool 'h100': a surge node needs spare reservation capacity; an exact-size reservation blocks the upgrade
          received: 1
          allowed:  0
          fix:      use maxSurge: 0, maxUnavailable: 1 unless the reservation has spare nodes
        """,
        id="reservation-with-surge",
    ),
    case(
        "gke",
        {
            "nodePools[0].machineType": "a3-ultragpu-8g",
            "nodePools[0].zoneAvailabilityOverride": {"zones": ["us-central1-a"], "reason": "reservation h200-a"},
        },
        """
        warning: gpu-cluster:nodePools[0].zones[0]: pool 'h100': a3-ultragpu-8g is not listed in us-central1-a by the catalog's sources (as of 2026-07-09); declared available by zoneAvailabilityOverride: reservation h200-a
          received: 'us-central1-a'
          allowed:  us-central1-b
          fix:      keep the override only while the capacity is yours
        """,
        id="zone-outside-catalog-availability-overridden",
    ),
    case(
        "eks",
        {"nodePools[0].multiNode": True, "nodePools[0].machineType": "g6e.8xlarge"},
        """
        warning: gpu-cluster:nodePools[0].multiNode: pool 'h100': no stored source confirms EFA on g6e.8xlarge; assuming 1 interface
          received: true
          fix:      check `aws ec2 describe-instance-types --instance-types g6e.8xlarge` (NetworkInfo.EfaInfo)
        """,
        id="efa-unconfirmed",
    ),
    case(
        "eks",
        {"cluster.kubernetesVersion": "1.34"},
        """
        warning: gpu-cluster:cluster.kubernetesVersion: EKS 1.34 is past standard support (extended-support billing from 2026-12-02, 00:00 UTC), so the control plane costs $0.60/h instead of $0.10/h
          received: '1.34'
          allowed:  versions in standard support on 2026-12-02: 1.35, 1.36
          fix:      set kubernetesVersion: "1.35" (a deployed cluster upgrades one minor version at a time)
        """,
        id="eks-version-in-extended-support",
    ),
    case(
        "eks",
        {
            "nodePools[0].upgrade": {"maxSurge": 1, "maxUnavailable": 1},
            "nodePools[0].multiNode": True,
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "reservationKind": "capacity-block",
                "upfrontFeeUsd": 21000,
                "window": {"start": "2030-01-07T11:30:00Z", "durationHours": 336},
            },
        },
        """
        warning: gpu-cluster:nodePools[0].upgrade.maxSurge: pool 'h100': EKS managed node groups have no surge count: maxSurge > 0 selects the DEFAULT update strategy, which launches up to 2 new nodes (the larger of 2 × 1 Availability Zone and maxUnavailable) before terminating old ones; a reservation without that many spare nodes blocks the update
          received: 1
          allowed:  0 (update strategy MINIMAL: old nodes are terminated before new ones launch)
          fix:      use maxSurge: 0 on GPU pools (no spare GPUs needed), or keep it to accept EKS's surge
        """,
        id="eks-surge-is-not-a-count",
    ),
    case(
        "eks",
        {
            "nodePools[0].capacity": {"type": "reservation", "reservation": "cr-0123456789abcdef0"},
            "nodePools[0].multiNode": True,
        },
        """
        warning: gpu-cluster:nodePools[0].capacity.placementGroup: pool 'h100': a multi-node ODCR pool gets no new placement group (a reservation serves only the placement group it was created in, if any), so its nodes are close together only if the reservation was created in a cluster placement group
          allowed:  the name of the cluster placement group the reservation was created in
          fix:      set capacity.placementGroup to it (PlacementGroupArn in `aws ec2 describe-capacity-reservations --capacity-reservation-ids cr-0123456789abcdef0`), or leave it out if the reservation has none
        """,
        id="eks-multi-node-odcr-without-placement-group",
    ),
]


@pytest.mark.parametrize("base, changes, expected", WARNING_CASES)
def test_pool_warnings_name_their_pool(base, changes, expected):
    assert_pool_issues_name_their_pool(config_for(base, changes))


@pytest.mark.parametrize("base, changes, expected", WARNING_CASES)
def test_warnings_do_not_raise_and_are_returned(base, changes, expected):
    spec, warnings = load_spec(config_for(base, changes))
    assert all(isinstance(w, SpecIssue) and w.warning for w in warnings)
    assert [str(w) for w in warnings] == expected
    assert spec.node_pools


def test_warnings_ride_along_with_errors_but_do_not_count():
    cfg = edits(
        GKE_BASELINE,
        {
            "nodePools[0].machineType": "a3-ultragpu-8g",
            "cluster.name": "ML_Train",
            "nodePools[0].zoneAvailabilityOverride": {"zones": ["us-central1-a"], "reason": "r"},
        },
    )
    with pytest.raises(SpecError) as info:
        load_spec(cfg)
    assert [e.path for e in info.value.errors] == ["gpu-cluster:cluster.name"]
    assert [w.path for w in info.value.issues if w.warning] == ["gpu-cluster:nodePools[0].zones[0]"]
    assert str(info.value).startswith("1 configuration error in the stack config:\n")
    assert "warning:" not in str(info.value)


def test_unicode_digits_in_a_key_are_reported_not_crashed():
    """Regression: sort_key used str.isdigit(), true for '²', and int('²') raised ValueError (found by hypothesis)."""
    with pytest.raises(SpecError) as info:
        load_spec(edits(GKE_BASELINE, {"nodePools²": 1}))
    assert [e.path for e in info.value.errors] == ["gpu-cluster:nodePools²"]
