"""Every error at once: a pool with a malformed optional field is still checked on the fields that parsed."""

from __future__ import annotations

import pytest

from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

BASE = {"cloud": "gcp", "region": "us-central1", "project": "my-proj-123", "cluster": {"name": "ml"}}


def _errors(pool: dict) -> dict[str, str]:
    with pytest.raises(SpecError) as exc:
        load_spec({**BASE, "nodePools": [pool]})
    return {e.path: e.problem for e in exc.value.errors}


def test_shape_error_does_not_hide_catalog_errors_in_the_same_pool():
    errors = _errors(
        {
            "name": "l4",
            "machineType": "g2-standard-8x",
            "zones": ["us-central1-q"],
            "maxNodes": 2,
            "minNodes": 3,
            "capacity": {"type": "spott"},
        }
    )
    assert set(errors) == {
        "gpu-cluster:nodePools[0].capacity.type",
        "gpu-cluster:nodePools[0].machineType",
        "gpu-cluster:nodePools[0].minNodes",
        "gpu-cluster:nodePools[0].zones[0]",
    }
    assert errors["gpu-cluster:nodePools[0].machineType"] == "pool 'l4': unknown GPU machine type for gcp"


def test_checks_that_read_the_malformed_field_are_skipped():
    # capacity is malformed, so the price check (which depends on it) must not guess with the on-demand default
    errors = _errors(
        {
            "name": "a4",
            "machineType": "a4-highgpu-8g",
            "zones": ["us-central1-b"],
            "maxNodes": 1,
            "capacity": {"type": "spott"},
        }
    )
    assert list(errors) == ["gpu-cluster:nodePools[0].capacity.type"]
    # multiNode is malformed: the one-zone rule for multi-node pools must not run on the default (false) either
    errors = _errors(
        {
            "name": "h",
            "machineType": "a3-highgpu-8g",
            "zones": ["us-central1-a", "us-central1-b"],
            "maxNodes": 2,
            "multiNode": "often",
        }
    )
    assert list(errors) == ["gpu-cluster:nodePools[0].multiNode"]


def test_a_missing_required_field_still_reports_only_the_shape():
    errors = _errors({"name": "l4", "machineType": "nope", "zones": ["us-central1-a"]})  # maxNodes missing
    assert list(errors) == ["gpu-cluster:nodePools[0].maxNodes"]


@pytest.mark.parametrize(
    "taint, path, problem",
    [
        (
            {"key": "bad key!", "value": "x", "effect": "NoSchedule"},
            "taints[0].key",
            "not a valid Kubernetes taint key",
        ),
        (
            {"key": "dedicated", "value": "x y", "effect": "NoSchedule"},
            "taints[0].value",
            "not a valid Kubernetes taint value",
        ),
        (
            {"key": "team.example.com/" + "a" * 64, "value": "", "effect": "NoExecute"},
            "taints[0].key",
            "not a valid Kubernetes taint key",
        ),
    ],
)
def test_taint_keys_and_values_follow_kubernetes_rules(taint, path, problem):
    errors = _errors(
        {"name": "l4", "machineType": "g2-standard-8", "zones": ["us-central1-a"], "maxNodes": 1, "taints": [taint]}
    )
    assert errors == {f"gpu-cluster:nodePools[0].{path}": f"pool 'l4': {problem}"}


def test_a_valid_prefixed_taint_with_empty_value_is_accepted():
    spec, _ = load_spec(
        {
            **BASE,
            "nodePools": [
                {
                    "name": "l4",
                    "machineType": "g2-standard-8",
                    "zones": ["us-central1-a"],
                    "maxNodes": 1,
                    "taints": [{"key": "example.com/team", "value": "", "effect": "NoSchedule"}],
                }
            ],
        }
    )
    assert spec.node_pools[0].taints[0].key == "example.com/team"


def test_snake_case_keys_are_refused_everywhere_like_at_the_top_level():
    errors = _errors({"name": "l4", "machine_type": "g2-standard-8", "zones": ["us-central1-a"], "maxNodes": 1})
    assert errors == {
        "gpu-cluster:nodePools[0].machineType": "pool 'l4': required setting is missing",
        "gpu-cluster:nodePools[0].machine_type": "pool 'l4': unknown setting",
    }
