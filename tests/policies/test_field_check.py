"""The shared "field must be X" base: the verdict (compliant, unknown, unset, not applicable) and the wording, on
synthetic resources; and the ten security rules that are built on it."""

from __future__ import annotations

import importlib

import pytest

from policies.field_check import AtMost, Equals, FieldCheck, Includes, IsSet, applies_to, field_checks, verdict
from policies.findings import Finding
from policies.rule import Resource
from policies.values import UNKNOWN

POOL, CLUSTER = "gcp:container/nodePool:NodePool", "gcp:container/cluster:Cluster"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
REPAIR = FieldCheck(
    types=(POOL,),
    path=("management", "autoRepair"),
    required=Equals(True),
    problem="auto-repair is off",
    fix="set management.autoRepair: true",
)
SHIELDED = FieldCheck(
    types=(CLUSTER,),
    path=("enableShieldedNodes",),
    required=Equals(True),
    unset_complies=True,
    problem="Shielded GKE Nodes are off",
    fix="set enableShieldedNodes: true",
)


def pool(props: dict, name: str = "np-1") -> Resource:
    return Resource(POOL, name, f"urn:{name}", props)


def cluster(props: dict) -> Resource:
    return Resource(CLUSTER, "ml-cluster", "urn:ml", {"name": "ml", **props})


def messages(check: FieldCheck, r: Resource, cfg: dict | None = None) -> list[str]:
    return [f.message for f in verdict(check, r, cfg or {})]


def test_a_differing_value_is_a_finding_labelled_observed_and_required():
    labelled = pool({"management": {"autoRepair": False}, "nodeConfig": {"labels": {"gpu-cluster/pool": "h100"}}})
    (finding,) = verdict(REPAIR, labelled, {})
    assert finding == Finding(
        "pool 'h100'",
        "auto-repair is off",
        observed="management.autoRepair false",
        required="true",
        fix="set management.autoRepair: true",
        keys=("h100", "np-1", "urn:np-1"),
    )
    assert finding.message == (
        "pool 'h100': auto-repair is off · observed: management.autoRepair false · "
        "required: true\nFix: set management.autoRepair: true"
    )


@pytest.mark.parametrize(
    "value, found",
    [(True, False), (UNKNOWN, False), (None, True), ("true", True), (1, True)],
    ids=["equal", "unknown-until-deploy", "unset", "a-string", "a-number-is-not-a-bool"],
)
def test_equals_passes_the_value_and_unknowns_only(value, found):
    props = {"management": {"autoRepair": value}} if value is not None else {}
    assert bool(messages(REPAIR, pool(props))) is found


def test_unset_complies_when_the_provider_default_is_the_required_value():
    assert messages(SHIELDED, cluster({})) == []
    assert messages(SHIELDED, cluster({"enableShieldedNodes": False})) == [
        "cluster 'ml': Shielded GKE Nodes are off · observed: enableShieldedNodes false · required: true (or unset)"
        "\nFix: set enableShieldedNodes: true"
    ]


def test_other_resource_types_are_not_read():
    assert messages(REPAIR, cluster({"management": {"autoRepair": False}})) == []
    assert messages(SHIELDED, pool({"enableShieldedNodes": False})) == []


def test_node_config_checks_read_the_pool_and_a_cluster_default_node_config():
    mode = FieldCheck(
        types=(POOL, CLUSTER),
        path=("workloadMetadataConfig", "mode"),
        node_config=True,
        required=Equals("GKE_METADATA"),
        problem="pods can read node credentials",
        fix="set it",
    )
    assert messages(mode, pool({"nodeConfig": {}})) == [
        "pool 'np-1': pods can read node credentials · observed: nodeConfig.workloadMetadataConfig.mode unset · "
        "required: GKE_METADATA\nFix: set it"
    ]
    assert messages(mode, cluster({})) == []  # no default node config: nothing to read
    assert [m.split(" · ")[0] for m in messages(mode, cluster({"nodeConfig": {}}))] == [
        "cluster 'ml' (default node config): pods can read node credentials"
    ]


def test_not_applicable_unset_meaning_and_wording_from_the_config():
    hops = FieldCheck(
        types=(TEMPLATE,),
        path=("metadataOptions", "hopLimit"),
        required=AtMost("maxHops"),
        applies=lambda t: t.get("metadataOptions", {}).get("httpEndpoint") != "disabled",
        unset_means="2 hops on AL2023",
        problem="pods reach the node role",
        fix=lambda t, cfg: f"set hopLimit: {cfg['maxHops']}",
    )
    template = Resource(TEMPLATE, "lt", "urn:lt", {"tags": {"gpu-cluster/pool": "p5"}, "metadataOptions": {}})
    assert messages(hops, template, {"maxHops": 1}) == [
        "pool 'p5' (launch template 'lt'): pods reach the node role · observed: metadataOptions.hopLimit unset (2 hops "
        "on AL2023) · required: at most 1, from maxHops\nFix: set hopLimit: 1"
    ]
    off = Resource(TEMPLATE, "lt", "urn:lt", {"metadataOptions": {"httpEndpoint": "disabled", "hopLimit": 5}})
    assert messages(hops, off, {"maxHops": 1}) == []
    within = Resource(TEMPLATE, "lt", "urn:lt", {"metadataOptions": {"hopLimit": 2.0}})  # wire numbers are floats
    assert messages(hops, within, {"maxHops": 2}) == []


def test_includes_and_is_set():
    logs = FieldCheck(
        types=(CLUSTER,), path=("logTypes",), required=Includes(knob="wanted"), problem="logs are off", fix="add them"
    )
    assert messages(logs, cluster({"logTypes": ["api", "audit"]}), {"wanted": ["api", "audit"]}) == []
    assert [m.split("\n")[0] for m in messages(logs, cluster({"logTypes": ["api"]}), {"wanted": ["api", "audit"]})] == [
        "cluster 'ml': logs are off · observed: logTypes [api] · required: all of api, audit, from wanted"
    ]
    template = FieldCheck(
        types=(POOL,),
        path=("launchTemplate",),
        required=IsSet("a launch template"),
        problem="no launch template",
        fix="add one",
    )
    assert messages(template, pool({"launchTemplate": {"id": "lt-1"}})) == []
    assert messages(template, pool({"launchTemplate": {}})) == [
        "pool 'np-1': no launch template · observed: launchTemplate {} · required: a launch template\nFix: add one"
    ]


def test_a_finding_names_its_wording_so_a_call_in_an_older_shape_fails_loudly():
    with pytest.raises(TypeError):
        Finding("pool 'h100'", "auto-repair is off", "management.autoRepair: true", "set it")  # type: ignore[misc]


def test_a_rule_runs_every_check_of_its_type_and_applies_to_their_types():
    check = field_checks((REPAIR, SHIELDED))
    assert [f.problem for f in check(pool({"management": {"autoRepair": False}}), {})] == ["auto-repair is off"]
    assert applies_to((REPAIR, SHIELDED, REPAIR)) == (POOL, CLUSTER)


BUILT_ON_THE_BASE = [
    "security_eks_control_plane_logs",
    "security_eks_imds_hop_limit",
    "security_eks_imdsv2",
    "security_eks_secrets_encryption",
    "security_gke_auto_repair",
    "security_gke_auto_upgrade",
    "security_gke_metadata_server",
    "security_gke_private_nodes",
    "security_gke_secure_boot",
    "security_gke_shielded_nodes",
]


@pytest.mark.parametrize("name", BUILT_ON_THE_BASE)
def test_the_ten_field_rules_keep_their_metadata_and_path_and_share_the_verdict(name):
    module = importlib.import_module(f"policies.rules.{name}")
    assert module.CHECKS and all(isinstance(c, FieldCheck) and c.path for c in module.CHECKS)
    assert module.RULE.applies_to == applies_to(module.CHECKS) and module.RULE.checkov
    assert module.RULE.check.__module__ == "policies.field_check"  # no verdict logic of its own
    assert not hasattr(module, "check")
