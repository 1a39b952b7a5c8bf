"""Messages stay readable at the edges: long values shortened, a mapping given a scalar explained
with an example, ``received: null``, NaN with its range, pools named, reservation pools never told to grow."""

from __future__ import annotations

import copy
import json

from tests.support.spec.edit import edits
from tests.support.spec.scheduling_fixtures import GKE_TEAMS
from tests.support.spec.cases import GKE_BASELINE, assert_pool_issues_name_their_pool, errors_of, issues_of


def test_a_10000_character_value_is_shortened_in_the_message():
    (error,) = errors_of(edits(GKE_BASELINE, {"nodePools[0].machineType": "x" * 10_000}))
    assert len(error) < 800
    assert "  received: 'xxxxxxxx" in error and "… (10,002 characters)" in error


def test_a_long_value_is_shortened_in_the_json_too():
    (issue,) = [i for i in issues_of(edits(GKE_BASELINE, {"nodePools[0].machineType": "x" * 10_000}))]
    assert len(json.dumps(issue.as_dict())) < 1500


def test_a_mapping_given_a_scalar_names_its_keys_and_shows_an_example():
    (error,) = errors_of(edits(GKE_BASELINE, {"nodePools[0].capacity": "spot"}))
    assert error.splitlines() == [
        "error: gpu-cluster:nodePools[0].capacity: pool 'h100': must be a mapping of settings, not a single value",
        "  received: 'spot'",
        "  allowed:  a mapping with the keys type, reservation, reservationProject, reservationKind, reservationBlock, "
        "ultraserverType, placementGroup, reservedNodes, window, upfrontFeeUsd, rollNodes, placementPolicy, … "
        "(16 in all)",
        "  fix:      write capacity: {type: spot}",
    ]
    assert "Capacity" not in error  # never the internal class name


def test_a_mapping_given_a_number_still_names_its_keys():
    (error,) = errors_of(edits(GKE_BASELINE, {"cluster.systemPool": 3}))
    assert "instance of" not in error and "SystemPool" not in error
    assert "  allowed:  a mapping with the keys machineType, minNodes, maxNodes" in error


def test_null_shows_received_null():
    (error,) = errors_of(edits(GKE_BASELINE, {"nodePools[0].maxNodes": None}))
    assert error.splitlines() == [
        "error: gpu-cluster:nodePools[0].maxNodes: pool 'h100': no value (null or an empty key)",
        "  received: null",
        "  allowed:  a whole number",
        "  fix:      write a value",
    ]


def test_null_in_json_is_null_not_a_string():
    (issue,) = [i for i in issues_of(edits(GKE_BASELINE, {"nodePools[0].minNodes": None})) if not i.warning]
    assert issue.as_dict()["value"] is None and str(issue).splitlines()[1] == "  received: null"
    assert issue.fix == "write a value, or remove the key to use its default"


def test_nan_is_strict_json_in_the_issue():
    (issue,) = [i for i in issues_of(edits(GKE_BASELINE, {"nodePools[0].maxNodes": float("nan")}))]
    json.dumps(issue.as_dict(), allow_nan=False)
    assert issue.allowed == "a whole number, 1 … 2147483647"


def test_zone_errors_name_the_pool():
    cfg = edits(
        GKE_BASELINE,
        {"nodePools[0].zones": ["us-east1-b", "us-central1-a", "us-central1-a"], "nodePools[0].multiNode": True},
    )
    assert_pool_issues_name_their_pool(cfg)
    assert all("pool 'h100'" in e for e in errors_of(cfg))


def test_quota_over_capacity_names_the_pool_and_its_max_nodes():
    (error,) = errors_of(
        edits(
            GKE_TEAMS, {"scheduling.queues[0].quotas[1].gpus": 10, "scheduling.queues[0].quotas[1].borrowingLimit": 0}
        )
    )
    assert "nominal quotas in pool 'l4' add up to 14 GPUs" in error
    assert "(nodePools[1].maxNodes: 4 × 2 = 8)" in error or "nodePools[1].maxNodes" in error
    assert "raise nodePools[1].maxNodes to" in error


def test_quota_over_a_reservation_pool_never_asks_to_raise_its_max_nodes():
    cfg = edits(
        GKE_TEAMS,
        {
            "nodePools[0].capacity": {"type": "reservation", "reservation": "h100-res"},
            "scheduling.queues[0].quotas[0].gpus": 30,
        },
    )
    (error,) = [e for e in errors_of(cfg) if "nominal quotas" in e]
    assert "raise" not in error and "maxNodes to" not in error
    assert error.splitlines()[-1] == (
        "  fix:      lower the quotas to 32 GPUs in total, or set scheduling.overcommit: true (pool 'h100' consumes "
        "h100-res; it grows only with a larger reservation)"
    )


def test_a_list_given_a_scalar_shows_the_list_it_meant():
    (error,) = errors_of(edits(GKE_BASELINE, {"nodePools[0].zones": "us-central1-a"}))
    assert (
        error.splitlines()[0]
        == "error: gpu-cluster:nodePools[0].zones: pool 'h100': must be a list, not a single value"
    )
    assert error.splitlines()[-1] == "  fix:      write zones: [us-central1-a]"


def test_null_as_a_list_entry_is_an_issue_not_a_crash():
    """``taints: [null]`` (found by the spec property test): the error ends in a list index, not a key."""
    (error,) = errors_of(edits(GKE_BASELINE, {"nodePools[0].taints": [None]}))
    assert error.splitlines()[:3] == [
        "error: gpu-cluster:nodePools[0].taints[0]: pool 'h100': no value (null or an empty key)",
        "  received: null",
        "  allowed:  a list; each entry a mapping with: key, effect",
    ]


def test_a_scalar_as_a_list_entry_names_the_entry_keys_not_a_crash():
    """``imageMirrors: [false]`` (found by the spec property test)."""
    (error,) = errors_of(edits(GKE_BASELINE, {"cluster.imageMirrors": [False]}))
    assert error.splitlines()[0] == (
        "error: gpu-cluster:cluster.imageMirrors[0]: must be a mapping of settings, not a single value"
    )


def test_a_key_that_looks_like_a_pydantic_location_tag_is_reported_as_the_users_key():
    # found by the totality property (tests/stacks/spec/test_spec_property.py): `function-` and `union[` were dropped from the
    # location as if pydantic had put them there, and the report then failed with an IndexError
    for key in ("function-", "function-before[x]", "union[a]"):
        config = copy.deepcopy(GKE_BASELINE)
        config["cluster"][key] = None
        (error,) = errors_of(config)
        assert error.startswith(f"error: gpu-cluster:cluster.{key}: unknown setting"), error
