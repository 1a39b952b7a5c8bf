"""Property tests for the stack loader: it is total (only SpecError escapes), and valid-by-construction specs pass."""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from catalog import CapacityType, Cloud, load_catalog
from stacks.validate.issues import SpecError
from stacks.plan.facts import pool_facts
from stacks.validate.load import load_spec
from stacks.spec.stack import TOP_LEVEL_KEYS, ClusterSpec, NodePool, StackSpec
from stacks.validate.cluster import EKS_VERSIONS
from stacks.validate.pool_capacity import GKE_COMPACT_PLACEMENT_MAX_NODES

CAT = load_catalog()
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GKE_BASELINE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-central1",
    "project": "ml-platform-prod",
    "labels": {"team": "ml"},
    "cluster": {"name": "ml-train", "authorizedNetworks": ["203.0.113.0/24"], "systemPool": {"maxNodes": 3}},
    "nodePools": [
        {
            "name": "h100",
            "machineType": "a3-highgpu-8g",
            "zones": ["us-central1-a"],
            "maxNodes": 4,
            "multiNode": True,
            "capacity": {"type": "reservation", "reservation": "h100-res"},
            "labels": {"example.com/team": "ml"},
            "taints": [{"key": "dedicated", "value": "train", "effect": "NoSchedule"}],
            "upgrade": {"maxSurge": 0, "maxUnavailable": 1},
        },
        {
            "name": "t4",
            "machineType": "n1-standard-8",
            "accelerator": {"type": "nvidia-tesla-t4", "count": 2},
            "zones": ["us-central1-b", "us-central1-c"],
            "minNodes": 1,
            "maxNodes": 8,
            "capacity": {"type": "spot"},
        },
    ],
}
EKS_BASELINE: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "accountId": "012345678901",
    "cluster": {
        "name": "ml-train",
        "kubernetesVersion": "1.34",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [
        {
            "name": "h100",
            "machineType": "p5.48xlarge",
            "zones": ["us-east-1a"],
            "maxNodes": 4,
            "multiNode": True,
            "capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "reservationKind": "capacity-block",
            },
        }
    ],
}


def _aliases(model) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


KNOWN_KEYS = sorted(
    {
        *_aliases(StackSpec),
        *_aliases(ClusterSpec),
        *_aliases(NodePool),
        "type",
        "count",
        "key",
        "value",
        "effect",
        "reservation",
        "maxSurge",
        "maxUnavailable",
        "machineType",
    }
)
PLAUSIBLE_STRINGS = sorted(
    {
        "gcp",
        "aws",
        "gke",
        "spot",
        "on-demand",
        "reservation",
        "NoSchedule",
        "RAPID",
        "existing",
        "create",
        "1.34",
        "0.0.0.0/0",
        "::/0",
        "10.0.0.0/8",
        "gpu-cluster/pool",
        "nvidia.com/gpu",
        "cr-0123456789abcdef0",
        "subnet-0123456789abcdef0",
        "capacity-block",
        "us-east-1a",
        "use1-az1",
        "",
        " ",
        "a" * 70,
        *(m for c in Cloud for m in CAT.machine_types(c)),
        *(a for (_, a) in CAT.attachable),
        *(r for (_, r) in CAT.regions),
        *(z for zs in CAT.regions.values() for z in zs),
    }
)

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=True)
    | st.text(max_size=12)
    | st.sampled_from(PLAUSIBLE_STRINGS)
)
json_key = st.sampled_from(KNOWN_KEYS) | st.text(max_size=10)
json_like = st.recursive(
    json_leaf,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(json_key, kids, max_size=5),
    max_leaves=25,
)


def _assert_total(raw: dict[str, Any]) -> None:
    """load_spec either accepts or raises SpecError; every issue is addressed and printable."""
    try:
        _, issues = load_spec(raw)
        assert all(i.warning for i in issues)
    except SpecError as exc:
        issues = exc.issues
        assert exc.errors, "SpecError without an error"
        assert str(exc)
    for issue in issues:
        assert issue.path.startswith("gpu-cluster:"), issue
        assert issue.problem.strip(), issue
        assert f"{issue.path}: {issue.problem}" in str(issue)


# -- (a) totality ------------------------------------------------------------------------------------------------
@pytest.mark.slow
@SETTINGS
@given(st.dictionaries(st.sampled_from(TOP_LEVEL_KEYS) | st.text(max_size=10), json_like, max_size=8))
@example(raw={"cluster": {"function-": None}})  # found by this test: a key shaped like pydantic's location tags
def test_random_json_configs_only_raise_spec_error(raw):
    _assert_total(raw)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a config (dict keys and list indexes), containers included."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, prefix + (i,))
    return out


@st.composite
def mutated_baseline(draw) -> dict[str, Any]:
    cfg = copy.deepcopy(draw(st.sampled_from([GKE_BASELINE, EKS_BASELINE])))
    for _ in range(draw(st.integers(1, 4))):
        paths = _paths(cfg)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = cfg
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "replace", "delete", "add-key", "plausible"]))
        if op == "delete":
            del parent[path[-1]]
        elif op == "add-key" and isinstance(parent, dict):
            parent[draw(json_key)] = draw(json_like)
        elif op == "plausible":
            parent[path[-1]] = draw(st.sampled_from(PLAUSIBLE_STRINGS) | st.integers(-3, 200))
        else:
            parent[path[-1]] = draw(json_like)
    return cfg


@pytest.mark.slow
@SETTINGS
@given(mutated_baseline())
def test_mutated_baselines_only_raise_spec_error(raw):
    _assert_total(raw)


def test_property_baselines_are_valid():
    for base in (GKE_BASELINE, EKS_BASELINE):
        load_spec(copy.deepcopy(base))


# -- (b) valid by construction -----------------------------------------------------------------------------------
dns_label = st.from_regex(r"[a-z]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
label_name = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?", fullmatch=True)
label_value = st.from_regex(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?)?", fullmatch=True)
hex_id = st.text("0123456789abcdef", min_size=17, max_size=17) | st.text("0123456789abcdef", min_size=8, max_size=8)


def _priced_options(cloud: Cloud, region: str) -> list[tuple[str, str | None, int | None, CapacityType]]:
    """Every (machine type, accelerator, count, capacity) the catalog can price in this region."""
    out = []
    for machine_type in CAT.machine_types(cloud):
        if (cloud, machine_type) in CAT.machines:
            shapes = [(None, None)]
        else:
            shapes = [
                (gpu.accelerator, n) for gpu in CAT.attachable_gpus(cloud, machine_type) for n in gpu.allowed_counts
            ]
        for accelerator, count in shapes:
            machine = CAT.resolve(cloud, machine_type, accelerator, count)
            # flex-start pools have rules of their own (minNodes 0, Kueue only): tests/stacks/validate's queued cases
            for capacity in (c for c in CapacityType if c != CapacityType.FLEX_START):
                offered = CAT.offered_zones(cloud, machine)
                in_region = offered is None or set(offered.zones) & set(CAT.zones(cloud, region))
                if CAT.node_price(machine, region, capacity) is not None and in_region:
                    out.append((machine_type, accelerator, count, capacity))
    return out


OPTIONS = {(c, r): _priced_options(c, r) for (c, r) in CAT.regions}


def test_every_catalog_region_offers_priced_pools():
    assert all(OPTIONS.values()), {k: len(v) for k, v in OPTIONS.items()}


@st.composite
def valid_pool(draw, cloud: Cloud, region: str, name: str, subnet_zones: list[str]) -> dict[str, Any]:
    machine_type, accelerator, count, capacity = draw(st.sampled_from(OPTIONS[(cloud, region)]))
    machine = CAT.resolve(cloud, machine_type, accelerator, count)
    offered = CAT.offered_zones(cloud, machine)  # a zone the catalog's sources list, where they list any
    zones_pool = [
        z
        for z in (subnet_zones if cloud == Cloud.AWS else CAT.zones(cloud, region))
        if offered is None or z in offered.zones
    ]
    multi_node = draw(st.booleans()) and not (cloud == Cloud.AWS and machine.efa_interfaces == 0)
    zones = (
        (draw(st.sampled_from(zones_pool)),)
        if multi_node
        else draw(st.lists(st.sampled_from(zones_pool), min_size=1, max_size=len(zones_pool), unique=True))
    )
    limit = GKE_COMPACT_PLACEMENT_MAX_NODES if multi_node and cloud == Cloud.GCP else 1000
    max_nodes = draw(st.integers(1, limit))
    pool: dict[str, Any] = {
        "name": name,
        "machineType": machine_type,
        "zones": list(zones),
        "maxNodes": max_nodes,
        "minNodes": draw(st.integers(0, max_nodes)),
        "multiNode": multi_node,
        "diskSizeGib": draw(st.integers(50, 65536)),
    }
    if accelerator is not None:
        pool["accelerator"] = {"type": accelerator, "count": count}
    elif cloud == Cloud.GCP and draw(st.booleans()):
        pool["accelerator"] = {"type": machine.accelerator} | ({"count": machine.gpus} if draw(st.booleans()) else {})
    cap: dict[str, Any] = {"type": capacity.value}
    if capacity == CapacityType.RESERVATION:
        cap["reservation"] = ("cr-" + draw(hex_id)) if cloud == Cloud.AWS else draw(dns_label)
        if cloud == Cloud.AWS and draw(st.booleans()):
            cap["reservationKind"] = draw(st.sampled_from(["capacity-reservation", "capacity-block"]))
        if cloud == Cloud.GCP and draw(st.booleans()):
            cap["reservationProject"] = "shared-reservations"
    pool["capacity"] = cap
    upgrades = [(0, 1), (1, 0), (1, 1), (0, 2), (2, 0)]
    if cloud == Cloud.AWS:  # EKS updates at least one node at a time (maxUnavailable >= 1)
        upgrades = [u for u in upgrades if u[1] >= 1]
    surge, unavailable = draw(st.sampled_from(upgrades))
    pool["upgrade"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    label_keys = draw(
        st.lists(
            st.tuples(st.sampled_from(["", "example.com/", "team.acme.io/"]), label_name).map("".join),
            max_size=3,
            unique=True,
        )
    )
    pool["labels"] = {k: draw(label_value) for k in label_keys}
    taint_keys = draw(st.lists(label_name.filter(lambda k: k != "nvidia.com/gpu"), max_size=3, unique=True))
    pool["taints"] = [
        {
            "key": k,
            "value": draw(label_value),
            "effect": draw(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])),
        }
        for k in taint_keys
    ]
    return pool


@st.composite
def valid_config(draw) -> dict[str, Any]:
    cloud, region = draw(st.sampled_from(sorted(OPTIONS, key=lambda k: (k[0].value, k[1]))))
    zones = list(CAT.zones(cloud, region)) or [f"{region}{letter}" for letter in "abcdz"]  # AWS: names per account
    cfg: dict[str, Any] = {"cloud": cloud.value, "region": region}
    cluster: dict[str, Any] = {"name": draw(dns_label)}
    subnet_zones: list[str] = []
    if cloud == Cloud.GCP:
        cfg["project"] = draw(st.from_regex(r"[a-z][-a-z0-9]{4,28}[a-z0-9]", fullmatch=True))
        cluster["releaseChannel"] = draw(st.sampled_from(["RAPID", "REGULAR", "STABLE"]))
    else:
        subnet_zones = draw(st.lists(st.sampled_from(zones), min_size=2, max_size=len(zones), unique=True))
        cluster["subnets"] = {z: "subnet-" + draw(hex_id) for z in subnet_zones}
        cluster["kubernetesVersion"] = draw(st.sampled_from(EKS_VERSIONS))
        if draw(st.booleans()):
            cfg["accountId"] = draw(st.from_regex(r"[0-9]{12}", fullmatch=True))
    networks = draw(
        st.lists(st.ip_addresses(v=4).map(lambda a: str(ipaddress.ip_network(f"{a}/24", strict=False))), max_size=3)
    )
    cluster["authorizedNetworks"] = networks
    cfg["labels"] = draw(
        st.dictionaries(
            st.from_regex(r"[a-z][-_a-z0-9]{0,20}", fullmatch=True),
            st.from_regex(r"[-_a-z0-9]{0,20}", fullmatch=True),
            max_size=3,
        )
    )
    cfg["cluster"] = cluster
    names = draw(st.lists(dns_label, min_size=1, max_size=4, unique=True))
    cfg["nodePools"] = [draw(valid_pool(cloud, region, name, subnet_zones)) for name in names]
    return cfg


@pytest.mark.slow
@SETTINGS
@given(valid_config())
def test_valid_by_construction_configs_pass(raw):
    try:
        spec, warnings = load_spec(copy.deepcopy(raw))
    except SpecError as exc:  # pragma: no cover - the failure message is the point
        raise AssertionError(f"valid config rejected:\n{exc}\nconfig: {raw}") from None
    assert all(w.warning for w in warnings)
    assert len(spec.node_pools) == len(raw["nodePools"])
    for pool in spec.node_pools:
        facts = pool_facts(spec, pool, CAT)
        assert facts.price.usd_per_hour > 0
        assert facts.gpus_per_node >= 1


@pytest.mark.slow
@SETTINGS
@given(valid_config(), st.data())
def test_one_mutation_of_a_valid_config_names_its_path(raw, data):
    """Metamorphic: break one rule in one pool of a valid config, and exactly that path is reported."""
    i = data.draw(st.integers(0, len(raw["nodePools"]) - 1))
    pool = raw["nodePools"][i]
    mutation = data.draw(st.sampled_from(["min>max", "upgrade-0-0", "bad-zone", "gpu-taint"]))
    if mutation == "min>max":
        pool["minNodes"], path = pool["maxNodes"] + 1, f"gpu-cluster:nodePools[{i}].minNodes"
    elif mutation == "upgrade-0-0":
        pool["upgrade"], path = {"maxSurge": 0, "maxUnavailable": 0}, f"gpu-cluster:nodePools[{i}].upgrade"
    elif mutation == "bad-zone":
        pool["zones"][0], path = "mars-north1-a", f"gpu-cluster:nodePools[{i}].zones[0]"
    else:
        pool["taints"].append({"key": "nvidia.com/gpu", "effect": "NoSchedule"})
        path = f"gpu-cluster:nodePools[{i}].taints[{len(pool['taints']) - 1}].key"
    try:
        load_spec(raw)
    except SpecError as exc:
        assert [e.path for e in exc.errors] == [path], str(exc)
    else:
        raise AssertionError(f"{mutation} on nodePools[{i}] was accepted")
