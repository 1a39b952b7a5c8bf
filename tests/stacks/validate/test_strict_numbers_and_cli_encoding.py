"""Numbers are read strictly (no boolean, no fraction, int32 at most, the clouds' own node
limits) and what the Pulumi CLI writes is accepted where its meaning is plain.

`pulumi config set --path` stores `true`/`false` as booleans and integers as numbers; top-level values always as
strings (CLI reference of `pulumi config set`; pulumi/pulumi#4393, #17586, #18285).
"""

from __future__ import annotations

import math

import pytest

from tests.support.spec.edit import edits
from tests.support.spec.cases import EKS_BASELINE, GKE_BASELINE, errors_of, issues_of
from stacks.validate.load import decode_config, load_spec


def _only_error(cfg) -> list[str]:
    (error,) = errors_of(cfg)
    return error.splitlines()


def test_max_nodes_true_is_refused_not_read_as_one():
    assert _only_error(edits(GKE_BASELINE, {"nodePools[0].maxNodes": True})) == [
        "error: gpu-cluster:nodePools[0].maxNodes: pool 'h100': a boolean where a whole number is expected",
        "  received: true",
        "  allowed:  a whole number, 1 … 2147483647",
        "  fix:      write a whole number, not true or false",
    ]


def test_a_fraction_is_refused_where_a_count_is_expected():
    assert _only_error(edits(GKE_BASELINE, {"nodePools[0].minNodes": 1.5}))[0] == (
        "error: gpu-cluster:nodePools[0].minNodes: pool 'h100': a number with a fraction where a whole number is "
        "expected"
    )


@pytest.mark.parametrize("value, shown", [(math.nan, ".nan"), (math.inf, ".inf"), (-math.inf, "-.inf")])
def test_nan_and_infinity_say_the_allowed_range(value, shown):
    assert _only_error(edits(GKE_BASELINE, {"nodePools[0].maxNodes": value}))[1:3] == [
        f"  received: {shown}",
        "  allowed:  a whole number, 1 … 2147483647",
    ]


@pytest.mark.parametrize(
    "path", ["nodePools[0].maxNodes", "nodePools[0].upgrade.maxSurge", "cluster.systemPool.maxNodes"]
)
def test_nothing_above_int32_anywhere(path):
    lines = _only_error(edits(GKE_BASELINE, {path: 2**31}))
    assert "number out of range" in lines[0] and lines[2].endswith(" … 2147483647")


def test_priority_weights_stop_at_int32_too():
    from tests.support.spec.scheduling_fixtures import GKE_TEAMS

    cfg = edits(GKE_TEAMS, {"scheduling.workload": "slurm", "scheduling.slurm": {"priorityWeights": {"qos": 2**31}}})
    assert any("priorityWeights.qos" in e and "out of range" in e for e in errors_of(cfg))


def test_gke_max_nodes_stops_at_1000_per_pool_zone():
    assert _only_error(edits(GKE_BASELINE, {"nodePools[0].maxNodes": 1001, "nodePools[0].multiNode": False}))[0:3] == [
        "error: gpu-cluster:nodePools[0].maxNodes: pool 'h100': GKE allows at most 1,000 nodes per node pool in each "
        "zone, so 1,000 in this pool's 1 zone",
        "  received: 1001",
        "  allowed:  1 … 1000",
    ]
    two_zones = edits(
        GKE_BASELINE, {"nodePools[0].maxNodes": 1500, "nodePools[0].zones": ["us-central1-a", "us-central1-b"]}
    )
    assert not [i for i in issues_of(two_zones) if "per node pool in each zone" in i.problem]


def test_eks_max_nodes_above_the_node_group_quota_is_a_warning():
    _, warnings = load_spec(edits(EKS_BASELINE, {"nodePools[0].maxNodes": 451}))
    assert [w.problem for w in warnings if w.path.endswith("maxNodes")] == [
        "pool 'h100': above EKS's default quota of 450 nodes per managed node group: the group stops scaling there "
        "unless the quota was raised"
    ]


# -- what the Pulumi CLI writes ----------------------------------------------------------------------------------
def test_an_integer_label_value_from_the_cli_becomes_its_decimal_string():
    """`pulumi config set --path 'gpu-cluster:labels.cost-center' 4711` writes an integer."""
    spec, _ = load_spec(edits(GKE_BASELINE, {"labels": {"cost-center": 4711}, "nodePools[0].labels": {"tier": 2}}))
    assert spec.labels == {"cost-center": "4711"} and spec.node_pools[0].labels == {"tier": "2"}


def test_a_boolean_label_or_taint_value_from_the_cli_becomes_true_or_false():
    spec, _ = load_spec(
        edits(
            GKE_BASELINE,
            {
                "nodePools[0].labels": {"spot": True},
                "nodePools[0].taints": [{"key": "x", "value": False, "effect": "NoSchedule"}],
            },
        )
    )
    assert spec.node_pools[0].labels == {"spot": "true"} and spec.node_pools[0].taints[0].value == "false"


def test_a_count_written_as_a_string_by_the_cli_is_read():
    """`--type string`, or a flat key: the CLI hands the program a digit string."""
    spec, _ = load_spec(edits(GKE_BASELINE, {"nodePools[0].maxNodes": "4", "cluster.deletionProtection": "false"}))
    assert spec.node_pools[0].max_nodes == 4 and spec.cluster.deletion_protection is False


def test_the_top_level_strings_the_cli_writes_are_decoded():
    raw = decode_config({"gpu-cluster:cloud": "gcp", "gpu-cluster:labels": '{"cost-center": 4711}'})
    assert raw == {"cloud": "gcp", "labels": {"cost-center": 4711}}


def test_a_refused_cli_value_gives_the_cli_fix_as_well_as_the_yaml_one():
    assert _only_error(edits(GKE_BASELINE, {"cluster.name": True}))[-1] == (
        "  fix:      write a string: quote it in YAML (with the CLI: pulumi config set --type string --path "
        "'gpu-cluster:cluster.name' VALUE)"
    )


@pytest.mark.parametrize("value", ["off", "no", "on", "yes", 0, 1, "0"])
def test_deletion_protection_off_as_a_string_is_refused_with_both_fixes(value):
    """YAML 1.1 read `off` as false, the CLI (YAML 1.2) as the string 'off'; pydantic's lax mode turned it into false
    and silently switched protection off."""
    lines = _only_error(edits(GKE_BASELINE, {"cluster.deletionProtection": value}))
    assert lines[0] == "error: gpu-cluster:cluster.deletionProtection: not true or false"
    assert lines[-1] == (
        "  fix:      write true or false, unquoted in YAML (with the CLI: pulumi config set --path "
        "'gpu-cluster:cluster.deletionProtection' false; --path stores true/false as booleans)"
    )


def test_account_id_as_an_integer_is_still_refused():
    """An unquoted 012345678901 would lose its leading zero: the one string that is not read from an integer."""
    lines = _only_error({**EKS_BASELINE, "accountId": 12345678901})
    assert lines[0] == "error: gpu-cluster:accountId: input should be a valid string"
