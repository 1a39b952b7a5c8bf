"""A pool's extra taints reach every layer that must tolerate them, from one place (``PoolFacts.tolerations``): the
Kueue ResourceFlavor, the Trainer runtime, the ``pools.*.tolerations`` output, the Slurm NodeSet plan and its Helm
values; and cross-layer-scheduler-tolerations refuses a flavor or NodeSet that drifts from the pool's taints.
Tainted pools on GKE and EKS, on the Kueue and the Slurm path."""

from __future__ import annotations

import functools

import pytest

from catalog import Cloud, load_catalog
from policies.pools import Taint
from policies.rules.cross_layer_scheduler_tolerations import tolerates
from preview.engine import run_program
from stacks.plan.slurm import plan_slurm
from stacks.plan.facts import pool_facts
from stacks.validate.load import load_spec
from tests.support.spec.edit import edit
from tests.support.policy.harness import Pack, find, wire, with_props
from tests.support.preview.recorded import of_type, one
from tests.support.spec.scheduling_fixtures import EKS_TEAMS, GKE_TEAMS, flat_config
from tests.support.slurm.configs import EKS_ZONES, GKE_NO_ACCOUNTING

GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
DEDICATED = {"key": "dedicated", "value": "team-a", "effect": "NoSchedule"}
DRAINING = {"key": "draining", "effect": "NoExecute"}  # no value: tolerated with Exists
TOLERATE_DEDICATED = {"key": "dedicated", "operator": "Equal", "value": "team-a", "effect": "NoSchedule"}
TOLERATE_DRAINING = {"key": "draining", "operator": "Exists", "effect": "NoExecute"}
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
RELEASE = "kubernetes:helm.sh/v3:Release"
RULE = "cross-layer-scheduler-tolerations"


def _tainted(config: dict, pool: str) -> dict:
    """``config`` (raw or flat) with two extra taints on the pool named ``pool``."""
    pools = config.get("nodePools") or config["gpu-cluster:nodePools"]
    index = next(i for i, p in enumerate(pools) if p["name"] == pool)
    return edit(config, f"nodePools[{index}].taints", [DEDICATED, DRAINING])


KUEUE_CASES = {
    "gke": (flat_config(_tainted(GKE_TEAMS, "l4")), "l4"),
    "eks": (flat_config(_tainted(EKS_TEAMS, "l40s")), "l40s"),
}
SLURM_CASES = {"gke": (_tainted(GKE_NO_ACCOUNTING, "l4"), "l4"), "eks": (_tainted(EKS_ZONES, "l4"), "l4")}


@functools.cache
def _run(path: str, cloud: str):
    config, pool = (KUEUE_CASES if path == "kueue" else SLURM_CASES)[cloud]
    return run_program(config), pool


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def test_pool_facts_tolerate_the_gpu_taint_and_every_extra_taint_exactly():
    spec, _ = load_spec(_tainted(GKE_TEAMS, "l4"), load_catalog())
    l4, h100 = (pool_facts(spec, p, load_catalog()) for p in (spec.node_pools[1], spec.node_pools[0]))
    assert l4.tolerations == [GPU, TOLERATE_DEDICATED, TOLERATE_DRAINING]
    assert h100.tolerations == [GPU]
    for tol, taint in zip(l4.tolerations[1:], (DEDICATED, DRAINING)):  # each matches its taint under k8s' rule
        provider_effect = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}[taint["effect"]]
        assert tolerates(tol, Taint(taint["key"], taint.get("value", ""), provider_effect))


@pytest.mark.parametrize("cloud", ["gke", "eks"])
def test_kueue_flavor_runtime_and_output_tolerate_a_tainted_pool(cloud):
    rec, pool = _run("kueue", cloud)
    flavors = {
        r.redacted_inputs["spec"]["nodeLabels"]["gpu-cluster/pool"]: r.redacted_inputs["spec"]
        for r in of_type(rec, FLAVOR)
    }
    assert flavors[pool]["tolerations"] == [GPU, TOLERATE_DEDICATED, TOLERATE_DRAINING]
    assert all(spec["tolerations"] == [GPU] for name, spec in flavors.items() if name != pool)
    runtime = one(rec, RUNTIME, f"kubeflow-runtime-torch-{pool}").redacted_inputs
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["tolerations"] == [GPU, TOLERATE_DEDICATED, TOLERATE_DRAINING]
    assert rec.outputs["pools"][pool]["tolerations"] == [GPU, TOLERATE_DEDICATED, TOLERATE_DRAINING]


@pytest.mark.parametrize("cloud", ["gke", "eks"])
def test_slurm_plan_and_nodeset_values_tolerate_a_tainted_pool(cloud):
    config, pool = SLURM_CASES[cloud]
    spec, _ = load_spec({k.split(":", 1)[1]: v for k, v in config.items()}, load_catalog())
    facts = [pool_facts(spec, p, load_catalog()) for p in spec.node_pools]
    plan = plan_slurm(spec.scheduling, facts)  # what the preview and the policy input are built from
    assert list(plan.nodeset(pool).tolerations) == [GPU, TOLERATE_DEDICATED, TOLERATE_DRAINING]
    rec, _ = _run("slurm", cloud)
    values = one(rec, RELEASE, "slurm-slurm").redacted_inputs["values"]
    assert values["nodesets"][pool]["podSpec"]["tolerations"] == [GPU, TOLERATE_DEDICATED, TOLERATE_DRAINING]
    others = [n for n in values["nodesets"] if n != pool]
    assert others and all(values["nodesets"][n]["podSpec"]["tolerations"] == [GPU] for n in others)


@pytest.mark.parametrize("path, cloud", [("kueue", "gke"), ("kueue", "eks"), ("slurm", "gke"), ("slurm", "eks")])
def test_the_pack_accepts_what_the_components_render_for_a_tainted_pool(pack, path, cloud):
    rec, _ = _run(path, cloud)
    assert [d for d in pack.stack(list(rec.resources)) if d[0] == RULE] == []


@pytest.mark.parametrize("cloud", ["gke", "eks"])
def test_a_flavor_missing_a_pool_taint_is_refused(pack, cloud):
    rec, pool = _run("kueue", cloud)
    rs = list(rec.resources)
    flavor = find(rs, FLAVOR, f"kueue-flavor-{pool}")
    name = wire(flavor)["metadata"]["name"]
    drifted = edit(wire(flavor), "spec.tolerations", [GPU, TOLERATE_DRAINING])
    assert [d for d in pack.stack([with_props(flavor, drifted) if r is flavor else r for r in rs]) if d[0] == RULE] == [
        (
            RULE,
            "mandatory",
            f"Kueue ResourceFlavor '{name}': does not tolerate pool '{pool}''s taint, so the workloads Kueue admits "
            "to it stay Pending · observed: untolerated taint dedicated=team-a:NoSchedule · required: a toleration "
            "for every NoSchedule and NoExecute taint of the pool\nFix: add {key: dedicated, operator: Equal, value: "
            "team-a, effect: NoSchedule} to "
            "spec.tolerations (gpu-cluster renders one toleration per pool taint)",
        )
    ]


@pytest.mark.parametrize("cloud", ["gke", "eks"])
def test_a_nodeset_missing_pool_taints_is_refused(pack, cloud):
    rec, pool = _run("slurm", cloud)
    rs = list(rec.resources)
    release = find(rs, RELEASE, "slurm-slurm")
    gpu_only = edit(wire(release), f"values.nodesets.{pool}.podSpec.tolerations", [GPU])
    assert [
        d for d in pack.stack([with_props(release, gpu_only) if r is release else r for r in rs]) if d[0] == RULE
    ] == [
        (
            RULE,
            "mandatory",
            f"Slurm NodeSet '{pool}': does not tolerate pool '{pool}''s taints, so its slurmd pods stay Pending · "
            "observed: untolerated taints dedicated=team-a:NoSchedule, draining=:NoExecute · required: a toleration "
            "for every NoSchedule and NoExecute taint of the pool\nFix: add {key: dedicated, operator: Equal, value: "
            "team-a, effect: NoSchedule}, "
            f"{{key: draining, operator: Exists, effect: NoExecute}} to nodesets.{pool}.podSpec.tolerations "
            "(gpu-cluster renders one toleration per pool taint)",
        )
    ]


def test_the_pool_taints_are_read_from_the_node_pool_resource(pack):
    """Adding a taint to the node pool alone (another program, a hand edit) is a drift the rule sees."""
    rec, _ = _run("kueue", "gke")
    rs = list(rec.resources)
    node_pool = find(rs, "gcp:container/nodePool:NodePool", "h100")
    taints = wire(node_pool)["nodeConfig"]["taints"] + [{"key": "maintenance", "value": "", "effect": "NO_EXECUTE"}]
    found = [
        d[2].split("\n")[0]
        for d in pack.stack(
            [
                with_props(node_pool, edit(wire(node_pool), "nodeConfig.taints", taints)) if r is node_pool else r
                for r in rs
            ]
        )
        if d[0] == RULE
    ]
    assert (
        len(found) == 1
        and "pool 'h100''s taint, " in found[0]
        and " · observed: untolerated taint maintenance=:NoExecute · " in found[0]
    )
    prefer = wire(node_pool)["nodeConfig"]["taints"] + [{"key": "soft", "value": "x", "effect": "PREFER_NO_SCHEDULE"}]
    assert [
        d
        for d in pack.stack(
            [
                with_props(node_pool, edit(wire(node_pool), "nodeConfig.taints", prefer)) if r is node_pool else r
                for r in rs
            ]
        )
        if d[0] == RULE
    ] == []


@pytest.mark.parametrize(
    "toleration, result",
    [
        ({"key": "dedicated", "operator": "Equal", "value": "team-a", "effect": "NoSchedule"}, True),
        ({"key": "dedicated", "value": "team-a"}, True),  # Equal is the default; any effect
        ({"key": "dedicated", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),  # empty key + Exists: every taint
        ({"key": "dedicated", "operator": "Equal", "value": "team-b", "effect": "NoSchedule"}, False),
        ({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, False),
    ],
)
def test_toleration_matching_follows_kubernetes(toleration, result):
    assert tolerates(toleration, Taint("dedicated", "team-a", "NO_SCHEDULE")) is result


def test_cloud_fixtures_are_what_the_names_say():
    assert {KUEUE_CASES[c][0]["gpu-cluster:cloud"] for c in KUEUE_CASES} == {Cloud.GCP.value, Cloud.AWS.value}
    assert {SLURM_CASES[c][0]["gpu-cluster:cloud"] for c in SLURM_CASES} == {Cloud.GCP.value, Cloud.AWS.value}
