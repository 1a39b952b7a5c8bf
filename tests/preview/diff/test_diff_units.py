"""The pure parts of the stack diff: input paths, resource matching, the replacement table, cost and policy deltas."""

from __future__ import annotations

import pytest
from google.protobuf import struct_pb2

from preview.cost import CostReport, FixedCost, PoolCost
from preview.diff.compare import CostThreshold
from preview.diff.cost import diff_cost
from preview.diff.policy import diff_violations
from preview.diff.resources import PROTECT_PATH, changed_paths, diff_resources, flatten
from preview.diff.spec import diff_specs
from preview.diff.spec_views import flatten_spec
from preview.engine import Registered
from preview.diff.replacement import EKS_NODE_GROUP, GKE_NODE_POOL, RULES, classify, covers
from preview.run import preview_config
from tests.support.preview.diff_fixtures import spec_side
from tests.support.spec.edit import edits
from tests.support.spec.stack_configs import EKS, GKE

STACK_URN = "urn:pulumi:s::gpu-cluster::pulumi:pulumi:Stack::gpu-cluster-s"


def reg(type_: str, name: str, inputs: dict, parent: Registered | None = None, ignore=(), protect=False) -> Registered:
    parent_urn = parent.urn if parent else STACK_URN
    return Registered(
        type=type_,
        name=name,
        urn=f"urn:pulumi:s::gpu-cluster::{type_}::{name}::{parent_urn[-12:]}",
        parent_urn=parent_urn,
        custom=True,
        inputs=inputs,
        raw_inputs=struct_pb2.Struct(),
        ignore_changes=list(ignore),
        protect=protect,
    )


def test_flatten_spells_paths_as_pulumi_does():
    flat = flatten(
        {
            "nodeConfig": {"labels": {"gpu-cluster/pool": "a"}, "guestAccelerators": [{"count": 8}]},
            "tags": {},
            "zones": [],
        }
    )
    assert flat == {
        'nodeConfig.labels["gpu-cluster/pool"]': "a",
        "nodeConfig.guestAccelerators[0].count": 8,
        "tags": {},
        "zones": [],
    }


def test_changed_paths_include_added_and_removed_fields():
    before = {"autoscaling": {"totalMaxNodeCount": 4}, "placementPolicy": {"type": "COMPACT"}}
    after = {"autoscaling": {"totalMaxNodeCount": 8}, "nodeLocations": ["a"]}
    assert changed_paths(before, after) == ["autoscaling.totalMaxNodeCount", "nodeLocations[0]", "placementPolicy.type"]


def test_resources_match_by_type_name_and_parent_chain():
    comp_a, comp_b = reg("gpu-cluster:gcp:GkeGpuNodePool", "a", {}), reg("gpu-cluster:gcp:GkeGpuNodePool", "b", {})
    base = [
        comp_a,
        comp_b,
        reg("gcp:serviceaccount/account:Account", "sa", {"x": 1}, comp_a),
        reg("gcp:serviceaccount/account:Account", "sa", {"x": 1}, comp_b),
    ]
    moved = reg("gcp:serviceaccount/account:Account", "sa", {"x": 1}, comp_b)
    diff = diff_resources(base, [comp_a, comp_b, moved])  # the one under "a" is gone, the one under "b" stays
    assert [(c.action, c.name, c.parents) for c in diff.changes] == [("remove", "sa", ("a",))]
    assert diff.unchanged == 3


def test_ignored_changes_do_not_count_and_protect_does():
    old = reg(
        GKE_NODE_POOL,
        "p",
        {"initialNodeCount": 0, "autoscaling": {"totalMinNodeCount": 0}},
        ignore=["initialNodeCount"],
    )
    new = reg(
        GKE_NODE_POOL,
        "p",
        {"initialNodeCount": 2, "autoscaling": {"totalMinNodeCount": 2}},
        ignore=["initialNodeCount"],
    )
    change = diff_resources([old], [new]).changes[0]
    assert change.action == "update"  # initialNodeCount is ForceNew, but Pulumi is told to ignore it
    assert change.paths == ("autoscaling.totalMinNodeCount",) and change.ignored == ("initialNodeCount",)
    only_ignored = reg(
        GKE_NODE_POOL,
        "p",
        {"initialNodeCount": 3, "autoscaling": {"totalMinNodeCount": 0}},
        ignore=["initialNodeCount"],
    )
    assert diff_resources([old], [only_ignored]).changes == []
    protected = reg(GKE_NODE_POOL, "p", old.inputs, ignore=["initialNodeCount"], protect=True)
    assert diff_resources([old], [protected]).changes[0].paths == (PROTECT_PATH,)


@pytest.mark.parametrize(
    "type_, path, replaces",
    [
        (GKE_NODE_POOL, "nodeConfig.guestAccelerators[0].type", True),
        (GKE_NODE_POOL, "nodeConfig.guestAccelerators[0].gpuSharingConfig.maxSharedClientsPerGpu", True),
        (GKE_NODE_POOL, "nodeConfig.spot", True),
        (GKE_NODE_POOL, "nodeConfig.reservationAffinity.values[0]", True),
        (GKE_NODE_POOL, "placementPolicy.type", True),
        (GKE_NODE_POOL, "nodeConfig.machineType", False),
        (GKE_NODE_POOL, "nodeConfig.diskSizeGb", False),
        (GKE_NODE_POOL, "nodeConfig.taints[1].key", False),
        (GKE_NODE_POOL, "nodeLocations[0]", False),
        (GKE_NODE_POOL, "autoscaling.totalMaxNodeCount", False),
        (EKS_NODE_GROUP, "instanceTypes[0]", True),
        (EKS_NODE_GROUP, "capacityType", True),
        (EKS_NODE_GROUP, "subnetIds[1]", True),
        (EKS_NODE_GROUP, "launchTemplate.id", True),
        (EKS_NODE_GROUP, "launchTemplate.version", False),
        (EKS_NODE_GROUP, "scalingConfig.maxSize", False),
        (EKS_NODE_GROUP, "labels.team", False),
    ],
)
def test_replacement_table(type_, path, replaces):
    verdict = classify(type_, [path])
    assert (path in verdict.replaces) is replaces
    assert verdict.unassessed == ()


def test_prefixes_cover_only_whole_segments():
    assert covers("nodeConfig.spot", "nodeConfig.spot") and not covers("nodeConfig.spot", "nodeConfig.spotPrice")
    assert classify(GKE_NODE_POOL, ["nodeConfig.somethingNew"]).unassessed == ("nodeConfig.somethingNew",)
    assert classify("aws:iam/role:Role", ["anything"]).unassessed == ()  # no table: not assessed, not flagged


@pytest.mark.parametrize("config", [GKE, EKS], ids=["gke", "eks"])
def test_every_input_the_program_sets_on_a_pool_is_classified(config):
    """Adding an input to a node pool / node group means deciding here whether changing it replaces the pool."""
    report = preview_config("t", config)
    pools = [r for r in report.resources if r.type in RULES]
    assert pools
    for r in pools:
        verdict = classify(r.type, sorted(flatten(r.redacted_inputs)))
        assert verdict.unassessed == (), f"{r.type} {r.name}: add these to preview/diff/replacement.py"


def _pool_cost(name: str, usd: float, lo: int, hi: int, gpus: int = 8) -> PoolCost:
    return PoolCost(
        pool=name,
        machine_type="m",
        gpu_model="H100",
        capacity="on-demand",
        gpus_per_node=gpus,
        min_nodes=lo,
        max_nodes=hi,
        usd_per_node_hour=usd,
        usd_per_gpu_hour=usd / gpus,
        usd_per_hour_min=usd * lo,
        usd_per_hour_max=usd * hi,
        usd_per_month_max=usd * hi * 730,
        price_source="s",
        price_as_of="2026-01-01",
    )


def test_cost_delta_per_pool_fixed_item_and_total():
    before = CostReport(
        pools=[_pool_cost("a", 10.0, 0, 4), _pool_cost("gone", 1.0, 1, 1)],
        fixed=[FixedCost("system pool (1-3 × e2)", 0.1, 0.3, "s", "d")],
    )
    after = CostReport(
        pools=[_pool_cost("a", 10.0, 1, 8), _pool_cost("new", 2.0, 0, 2)],
        fixed=[FixedCost("system pool (1-6 × e2)", 0.1, 0.6, "s", "d")],
    )
    diff = diff_cost(before, after)
    lines = {line.item: line for line in diff.lines}
    assert (lines["a"].delta_min, lines["a"].delta_max) == (10.0, 40.0)
    assert (lines["gone"].after_max, lines["new"].before_max) == (0.0, 0.0)
    assert lines["system pool"].delta_max == pytest.approx(0.3)
    assert diff.delta_max == pytest.approx(40.0 - 1.0 + 4.0 + 0.3)
    assert (diff.before_gpus, diff.after_gpus) == (40, 80)
    assert diff.as_dict()["totals"]["usdPerMonthMax"]["delta"] == pytest.approx(43.3 * 730)


def _v(policy: str, pool: str | None, message: str, enforcement: str = "advisory", resource: str = "") -> dict:
    return {"policy": policy, "pool": pool, "resource": resource, "message": message, "enforcement": enforcement}


def test_violations_new_resolved_unchanged_and_reworded():
    before = [
        _v("cost-gpu-hour-limit", "h100", "pool 'h100': $11/GPU-h over"),
        _v("cost-price-age", "l4", "old"),
        _v("cost-stack-budget", None, "stack: $12,000/h over budget", "mandatory"),
    ]
    after = [
        _v("cost-price-age", "l4", "old"),
        _v("cost-stack-budget", None, "stack: $11,000/h over budget", "mandatory"),
        _v("topology-efa-interfaces", "p5", "missing EFA", "mandatory"),
    ]
    d = diff_violations(before, after)
    assert [v["policy"] for v in d.new] == ["topology-efa-interfaces"]
    assert [v["policy"] for v in d.resolved] == ["cost-gpu-hour-limit"]
    assert sorted(v["policy"] for v in d.unchanged) == ["cost-price-age", "cost-stack-budget"]
    assert [(b["message"], a["message"]) for b, a in d.reworded] == [
        ("stack: $12,000/h over budget", "stack: $11,000/h over budget")
    ]
    assert [v["policy"] for v in d.new_mandatory] == ["topology-efa-interfaces"]


def test_the_same_policy_on_another_pool_is_a_new_violation():
    d = diff_violations([_v("p", "a", "m")], [_v("p", "a", "m"), _v("p", "b", "m")])
    assert [v["pool"] for v in d.new] == ["b"] and len(d.unchanged) == 1 and d.resolved == []


@pytest.mark.parametrize(
    "text, delta, base, exceeded",
    [
        ("100", 150.0, 1000.0, True),
        ("100", 100.0, 1000.0, False),
        ("$100", -500.0, 1000.0, False),
        ("10%", 150.0, 1000.0, True),
        ("10%", 50.0, 1000.0, False),
        ("10%", 1.0, 0.0, True),
    ],
)
def test_cost_threshold(text, delta, base, exceeded):
    before = CostReport(pools=[], fixed=[FixedCost("x", base, base, "s", "d")])
    after = CostReport(pools=[], fixed=[FixedCost("x", base + delta, base + delta, "s", "d")])
    assert CostThreshold.parse(text).exceeded_by(diff_cost(before, after)) is exceeded


def test_cost_threshold_refuses_nonsense():
    with pytest.raises(ValueError, match="dollars per hour at max"):
        CostThreshold.parse("lots")


def test_spec_lists_of_named_things_match_by_name():
    flat = flatten_spec(
        {"queues": [{"name": "a", "quotas": [{"pool": "h100", "gpus": 8}]}], "zones": ["x", "y"], "labels": {}}
    )
    assert flat["queues[a].quotas[h100].gpus"] == 8 and flat["zones"] == ["x", "y"] and "labels" not in flat


SLURM = {
    **GKE,
    "gpu-cluster:nodePools": GKE["gpu-cluster:nodePools"]
    + [{"name": "l4", "machineType": "g2-standard-8", "zones": ["us-central1-a"], "minNodes": 2, "maxNodes": 2}],
    "gpu-cluster:scheduling": {
        "workload": "slurm",
        "queues": [{"name": "team", "quotas": [{"pool": "h100", "gpus": 16}]}],
        "priorityClasses": [{"name": "high", "value": 10}],
    },
}


def test_slurm_accounts_priorities_partitions_and_pool_taints_read_as_the_user_wrote_them():
    head = edits(
        SLURM,
        {
            "scheduling.queues[0].quotas[0].gpus": 8,
            "scheduling.queues[0].fairShareWeight": 3,
            "scheduling.priorityClasses[0].value": 20,
            "scheduling.slurm": {"allPoolsPartition": False},
            "nodePools[1].maxNodes": 4,
            "nodePools[1].minNodes": 4,
            "nodePools[1].taints": [{"key": "eval", "effect": "NoSchedule"}],
        },
    )
    entities = {(e.kind, e.name): e for e in diff_specs(spec_side(SLURM), spec_side(head), "s")}
    changes = {k: [(c.label, c.before, c.after) for c in e.changes] for k, e in entities.items()}
    assert changes[("Slurm account", "team")] == [("fair-share weight", 1, 3), ("quota h100", 16, 8)]
    assert changes[("priority class", "high")] == [("priority", 10, 20)]
    assert ("taints", [], ["eval=:NoSchedule"]) in changes[("pool", "l4")]
    assert changes[("Slurm partition", "l4")] == [("max nodes", 2, 4), ("max GPUs", 2, 4)]
    assert entities[("Slurm partition", "all")].status == "removed"
    assert ("slurm.allPoolsPartition", True, False) in changes[("scheduling", "slurm")]
