"""Generated minimal stacks over the feature space (cloud × machine family × capacity type × workload × fabric ×
sharing × fleet role), previewed in-process as a new user would run them: each exits 0, or exits 2 with refusals
that say what is allowed and how to fix it, and nothing created; never a mandatory violation, since a minimal stack
writes nothing the pack could object to (every image, runtime and chart value is gpu-cluster's default).

The same run checks that the views agree where they meet: the what-if's paid dollars for a pool kept up equal the
preview's $/h × hours (one billing model), the preview's cold pod-start figure for a pool's largest gang equals
the what-if's time to running of that gang on an empty pool, and every job the what-if starts under Kueue passes,
on the flavor it ran on, the per-flavor checks ported from Kueue's flavor assigner (``stacks/plan/admission.py``:
TAS match, taints, node selector) and fits that flavor's maximum quota, from the objects the stack renders (the
assigner's choice among flavors is not replayed). The example count is bounded so this runs in CI."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import CapacityType, Cloud, load_catalog
from preview.run import preview_config, preview_stack
from render.fleet import runtime_pod_template
from render.kueue import render_kueue
from render.kueue_config import manager_config
from render.trainer import runtime_name, training_runtimes
from stacks.plan.admission import flavor_mismatch, max_capacity, podset_from_template, queue_from_objects
from stacks.plan.stack import plan_stack
from whatif.api import cluster_of, load_stack_spec
from whatif.cluster import slices_for
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs
from tests.support.spec.stack_configs import EKS, GKE

CAT = load_catalog()
EXAMPLES = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
MACHINES = {
    Cloud.GCP: ("a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "g2-standard-24", "a2-highgpu-1g"),
    Cloud.AWS: ("p5.48xlarge", "p4d.24xlarge", "g6e.xlarge", "g5.xlarge"),
}
CAPACITY = {
    Cloud.GCP: ("on-demand", "spot", "reservation", "flex-start"),
    Cloud.AWS: ("on-demand", "spot", "reservation", "capacity-block"),
}
HOURS = 10.0


def _zone(cloud: Cloud, region: str, machine: str) -> str:
    """A zone of the region that offers the machine (the generator writes a valid zone; limits are tested elsewhere)."""
    if cloud == Cloud.AWS:  # AZ names map to IDs per account: the fixture's subnets name the zones
        return "us-east-1a"
    zones = sorted(CAT.zones(cloud, region))
    offered = CAT.offered_zones(cloud, CAT.resolve(cloud, machine, None, None))
    if offered is not None:
        zones = [z for z in zones if z in offered.zones] or zones
    return zones[0]


def _list_rate(cloud: Cloud, machine: str) -> float:
    """The on-demand list $/node-hour (a block's fee is written below it, as blocks are sold)."""
    price = CAT.node_price(CAT.resolve(cloud, machine, None, None), "us-east-1", CapacityType.ON_DEMAND)
    assert price is not None, machine
    return price.usd_per_hour


def _capacity(cloud: Cloud, kind: str, nodes: int, machine: str = "p5.48xlarge") -> dict[str, Any]:
    if kind == "reservation":
        return {"type": "reservation", "reservation": "res-a" if cloud == Cloud.GCP else "cr-0123456789abcdef0"}
    if kind == "capacity-block":
        return {
            "type": "reservation",
            "reservation": "cr-0123456789abcdef0",
            "reservationKind": "capacity-block",
            "window": {"start": "2030-01-07T11:30:00Z", "durationHours": 336},
            "upfrontFeeUsd": round(0.6 * _list_rate(cloud, machine) * 336 * nodes, 2),
        }
    return {"type": kind}


@st.composite
def stacks(draw) -> dict[str, Any]:
    cloud = draw(st.sampled_from([Cloud.GCP, Cloud.AWS]))
    base = copy.deepcopy(GKE if cloud == Cloud.GCP else EKS)
    region = base["gpu-cluster:region"]
    machine = draw(st.sampled_from(MACHINES[cloud]))
    capacity = draw(st.sampled_from(CAPACITY[cloud]))
    max_nodes = draw(st.integers(1, 4))
    pool: dict[str, Any] = {
        "name": "gpu",
        "machineType": machine,
        "zones": [_zone(cloud, region, machine)],
        "minNodes": draw(st.sampled_from([0, max_nodes])),
        "maxNodes": max_nodes,
    }
    if capacity != "on-demand":
        pool["capacity"] = _capacity(cloud, capacity, max_nodes, machine)
    if draw(st.booleans()):  # fabric on (where the machine has one)
        pool["multiNode"] = True
    workload = draw(st.sampled_from(["none", "kubeflow", "slurm"]))
    if draw(st.booleans()):
        pool["gpuRuntime"] = {"sharing": {"mode": "time-slicing", "replicas": 2}}
    config = {**base, "gpu-cluster:nodePools": [pool]}
    if workload != "none":
        gpus = max_nodes * CAT.resolve(cloud, machine, None, None).gpus
        config["gpu-cluster:scheduling"] = {
            "workload": workload,
            "queues": [{"name": "team", "quotas": [{"pool": "gpu", "gpus": gpus}]}],
        }
    if draw(st.booleans()):
        config["gpu-cluster:fleet"] = {"role": "worker"}
    return config


def _pool(config: dict[str, Any]) -> dict[str, Any]:
    return config["gpu-cluster:nodePools"][0]


def _workload(config: dict[str, Any]) -> str:
    return (config.get("gpu-cluster:scheduling") or {}).get("workload", "none")


KNOWN_DEFAULT_DEFECTS: dict[str, Any] = {}
"""Mandatory rules a minimal stack may still fail on a default, each with the case it is tolerated in: none. A default
gpu-cluster chooses satisfies every mandatory rule, or validation refuses the stack (exit 2) naming what to write."""


def _known_default_defect(config: dict[str, Any], violation: dict[str, Any]) -> bool:
    known = KNOWN_DEFAULT_DEFECTS.get(violation["policy"])
    return known is not None and known(config)


def _refusal_is_clear(issue) -> bool:
    """An error says where, what was received or what is allowed, and how to fix it."""
    return bool(issue.path and issue.problem and (issue.fix or issue.allowed))


@given(stacks())
@EXAMPLES
def test_a_minimal_stack_previews_or_is_refused_clearly_and_never_fails_a_mandatory_rule(config):
    report = preview_config("generated", config)
    mandatory = [
        v for v in report.violations if v.get("enforcement") == "mandatory" and not _known_default_defect(config, v)
    ]
    assert not mandatory, f"a mandatory rule flags what the user did not write: {mandatory}"
    if report.errors:
        assert report.exit_code == 2 and report.resources == []
        unclear = [str(e) for e in report.errors if not _refusal_is_clear(e)]
        assert not unclear, unclear
        return
    if any(_known_default_defect(config, v) for v in report.violations):
        return  # exit 1 for a known defect (above)
    assert report.exit_code == 0, [str(v) for v in report.violations]
    _whatif_pays_the_preview_price(config, report)
    _whatif_time_to_running_is_the_preview_pod_start(config, report)
    _whatif_starts_only_what_kueue_admits(config)


def _spec(config: dict[str, Any]):
    return load_stack_spec(
        {k.removeprefix("gpu-cluster:"): v for k, v in config.items() if k.startswith("gpu-cluster:")}
    )


def _whatif_pays_the_preview_price(config: dict[str, Any], report) -> None:
    """Every node up for HOURS (``--nodes-up max``): the what-if's $ for the pool = the preview's $/h max × HOURS."""
    pool = report.cost.pools[0]
    if pool.usd_per_hour_max is None:
        return
    opts = SimOptions(nodes_up="max", spot_interruptions=False, horizon_s=HOURS * 3600)
    spec = _spec(config)
    model = cluster_of(spec, "generated", opts)
    m = model.pools["gpu"]
    full = Job("full", 0, next(iter(model.queues)), m.gpus_per_node, run_s=2 * HOURS * 3600, nodes=m.max_nodes)
    res = simulate_jobs(model, [full], 0, opts)
    u = res.pools["gpu"]
    paid_usd = u.paid_node_s / 3600 * u.usd_per_node_hour
    assert paid_usd == pytest.approx(pool.usd_per_hour_max * HOURS, rel=1e-9), (
        f"what-if ${paid_usd:,.2f} vs preview ${pool.usd_per_hour_max:,.2f}/h × {HOURS:g} h"
    )


def _whatif_time_to_running_is_the_preview_pod_start(config: dict[str, Any], report) -> None:
    """On an empty pool at minNodes 0, the largest gang's time to running in the what-if is the preview's cold
    start (Kubernetes schedulers; a Slurm job starts in running slurmd pods)."""
    spec = _spec(config)
    p = spec.node_pools[0]
    row = report.pod_start[0]["largestGang"]
    if p.min_nodes != 0 or (spec.scheduling is not None and spec.scheduling.workload.value == "slurm"):
        return
    opts = SimOptions(spot_interruptions=False)
    model = cluster_of(spec, "generated", opts)
    queue = next(iter(model.queues))
    gpus = model.pools["gpu"].gpus_per_node
    res = simulate_jobs(model, [Job("gang", 0, queue, gpus, run_s=60, nodes=row["pods"])], 0, opts)
    running = res.jobs["gang"].running_s
    assert running is not None and running == pytest.approx(row["coldS"], abs=0.1), (running, row)


def _whatif_starts_only_what_kueue_admits(config: dict[str, Any]) -> None:
    """Single-node jobs, a sub-node job and a whole-pool gang: each the what-if starts passes Kueue's per-flavor checks
    (TAS match, taints, node selector) and quota for the rendered ClusterQueue, with the job's PodSet as its
    TrainingRuntime renders it (the manager's excluded resources dropped, as Kueue drops them)."""
    spec = _spec(config)
    if spec.scheduling is None or spec.scheduling.workload.value != "kubeflow":
        return
    assert check_admitted_starts(spec) > 0, "the what-if started nothing: the invariant checked nothing"


def check_admitted_starts(spec) -> int:
    """Runs a few jobs on the stack's what-if and asserts each started one admissible; returns how many started."""
    plan = plan_stack(spec, CAT)
    facts, placements = list(plan.facts), plan.kueue.placements
    objects = render_kueue(spec.scheduling, facts, placements, namespaces=False)
    runtimes = {r["metadata"]["name"]: r for r in training_runtimes(facts, placements)}
    excluded = manager_config(spec.scheduling)["resources"]["excludeResourcePrefixes"]
    queues = {
        cq["metadata"]["name"]: queue_from_objects(cq, objects.flavors, objects.topologies)
        for cq in objects.cluster_queues
    }
    opts = SimOptions(spot_interruptions=False)
    model = cluster_of(spec, "generated", opts)
    started = 0
    for queue in model.queues:
        jobs = []
        for name in model.queues[queue].quotas:
            m = model.pools[name]
            jobs += [
                Job(f"{queue}-{name}-one-{i}", 60.0 * i, queue, m.gpus_per_node, run_s=1800, pool=name)
                for i in range(2)
            ]
            jobs.append(
                Job(f"{queue}-{name}-gang", 0, queue, m.gpus_per_node, run_s=1800, nodes=m.max_nodes, pool=name)
            )
            if m.gpus_per_node > 1:
                jobs.append(Job(f"{queue}-{name}-part", 30, queue, m.gpus_per_node // 2, run_s=1800, pool=name))
        res = simulate_jobs(model, jobs, 0, opts)
        for job in jobs:
            out = res.jobs[job.id]
            if not out.starts:
                continue
            started += 1
            pool = model.pools[out.pool]
            shape = queues[queue]
            flavor = objects.flavor_names()[out.pool]
            group = next(g for g in shape.groups if flavor in g.flavors)
            runtime = runtimes.get(runtime_name(out.pool))
            template = (
                runtime_pod_template(runtime)
                if runtime is not None
                else _bare_pod(next(f for f in facts if f.name == out.pool), group)
            )  # shared GPUs: no runtime, a plain pod
            ps = podset_from_template("node", job.nodes, template, excluded)
            gpu = next(r for r in ps.requests if r.startswith("nvidia.com/"))
            ps = dataclasses.replace(ps, requests={**ps.requests, gpu: slices_for(pool, job.gpus_per_node, None)})
            assert set(ps.requests) <= set(group.covered), f"{job.id}: Kueue has no quota for {sorted(ps.requests)}"
            assert flavor_mismatch(shape, ps, flavor, group) is None, (
                job.id,
                flavor_mismatch(shape, ps, flavor, group),
            )
            need, cap = ps.requests[gpu] * ps.count, max_capacity(shape, group.quotas[(flavor, gpu)])
            assert need <= cap, f"{job.id} started on {flavor}: {need} > Kueue's maximum capacity {cap}"
    return started


def _bare_pod(fact, group) -> dict[str, Any]:
    """The pod a user submits to a pool without a TrainingRuntime (shared GPUs): the pool's label as node selector
    and the GPU resource the queue's quota covers."""
    resource = next(r for r in group.covered if r.startswith("nvidia.com/"))
    return {
        "spec": {
            "nodeSelector": dict(fact.pool_label),
            "containers": [{"name": "main", "resources": {"requests": {resource: 1}}}],
        }
    }


@pytest.mark.parametrize("stack", ["gke-kueue", "eks-kueue", "gke-flex-start-tas"])
def test_every_job_the_what_if_starts_on_an_example_is_one_kueue_admits(stack):
    """The examples' pools as rendered (EFA devices and huge pages requested, excluded from quota by the manager)."""
    assert check_admitted_starts(load_stack_spec(stack)) > 0


def test_the_fleet_roll_up_is_the_sum_of_the_workers_own_previews():
    """The manager's Fleet section counts each worker as that worker's own preview prices it (the same stack file,
    previewed alone), and its totals are the manager's plus the workers'."""
    manager = preview_stack("fleet")
    assert manager.fleet is not None, [str(e) for e in manager.errors]
    rows = {c["name"]: c for c in manager.fleet["clusters"]}
    alone = {"gke": preview_stack("fleet-gke").cost, "eks": preview_stack("fleet-eks").cost}
    for name, cost in alone.items():
        assert rows[name]["usdPerHourMax"] == round(cost.usd_per_hour_max, 4)
        assert rows[name]["usdPerHourMin"] == round(cost.usd_per_hour_min, 4)
        assert rows[name]["usdPerMonthMax"] == round(cost.usd_per_month_max, 2)
    own = manager.cost.usd_per_hour_max + sum(c.usd_per_hour_max for c in alone.values())
    assert manager.fleet["totals"]["usdPerHourMax"] == pytest.approx(own, abs=1e-3)


A3_MEGA_KUEUE = {
    **GKE,
    "gpu-cluster:nodePools": [
        {"name": "gpu", "machineType": "a3-megagpu-8g", "zones": ["us-central1-a"], "maxNodes": 16}
    ],
    "gpu-cluster:scheduling": {
        "workload": "kubeflow",
        "queues": [{"name": "team", "quotas": [{"pool": "gpu", "gpus": 128}]}],
    },
}


def test_an_hgx_pool_of_sixteen_nodes_with_every_default_is_multi_node_and_passes_the_pack():
    """16 x a3-megagpu-8g with Kueue and nothing else written: the pool is multi-node by default (compact placement,
    its TCPXO fabric), so the mandatory placement rule has nothing to flag."""
    report = preview_config("generated", A3_MEGA_KUEUE)
    assert report.exit_code == 0, [str(e) for e in report.errors] + [str(v) for v in report.violations]
    assert _spec(A3_MEGA_KUEUE).node_pools[0].multi_node


def test_writing_multi_node_false_keeps_an_hgx_pool_single_node():
    config = copy.deepcopy(A3_MEGA_KUEUE)
    config["gpu-cluster:nodePools"][0]["multiNode"] = False
    assert not _spec(config).node_pools[0].multi_node


def test_an_hgx_pool_over_two_zones_is_not_made_multi_node_by_default():
    """Compact placement cannot span zones: the default stays false and the pack names the zones the user wrote."""
    config = copy.deepcopy(A3_MEGA_KUEUE)
    config["gpu-cluster:nodePools"][0]["zones"] = ["us-central1-a", "us-central1-b"]
    assert not _spec(config).node_pools[0].multi_node


def test_the_multi_node_default_uses_the_packs_node_threshold():
    from policies.multinode import MIN_NODES_SCHEMA
    from stacks.validate.multi_node_default import MULTI_NODE_MIN_NODES

    assert MULTI_NODE_MIN_NODES == MIN_NODES_SCHEMA["default"]
    config = copy.deepcopy(A3_MEGA_KUEUE)
    config["gpu-cluster:nodePools"][0]["maxNodes"] = MULTI_NODE_MIN_NODES - 1
    config["gpu-cluster:scheduling"]["queues"][0]["quotas"][0]["gpus"] = 8
    assert not _spec(config).node_pools[0].multi_node


def _refused(config: dict[str, Any], path_end: str) -> str:
    report = preview_config("generated", config)
    assert report.exit_code == 2 and report.resources == [], [str(v) for v in report.violations]
    hits = [e for e in report.errors if not e.warning and e.path.endswith(path_end)]
    assert hits and all(_refusal_is_clear(e) for e in hits), [str(e) for e in report.errors]
    return str(hits[0])


def test_a_multi_node_efa_pool_of_a_slurm_stack_without_a_slurmd_image_is_refused_naming_the_image_to_build():
    """Slinky's default slurmd image has no libfabric/aws-ofi-nccl; gpu-cluster cannot default an image the user must
    build and push, so validation asks for it instead of the pack flagging the default."""
    config = {
        **EKS,
        "gpu-cluster:nodePools": [
            {"name": "gpu", "machineType": "p5.48xlarge", "zones": ["us-east-1a"], "maxNodes": 2, "multiNode": True}
        ],
        "gpu-cluster:scheduling": {
            "workload": "slurm",
            "queues": [{"name": "team", "quotas": [{"pool": "gpu", "gpus": 16}]}],
        },
    }
    text = _refused(config, "nodePools[0].fabric.runtimeImage")
    assert "images/slurmd-efa" in text and "runtimeImageBuild: slurmd-efa" in text
    config["gpu-cluster:nodePools"][0]["fabric"] = {"mode": "off"}
    assert not [
        e
        for e in preview_config("generated", config).errors
        if e.path.endswith("fabric.runtimeImage") and not e.warning
    ]


def test_a_flex_start_pool_in_a_stack_without_kueue_is_refused_since_nothing_would_request_its_nodes():
    pool = {
        "name": "gpu",
        "machineType": "a3-highgpu-8g",
        "zones": ["us-central1-a"],
        "maxNodes": 1,
        "capacity": {"type": "flex-start"},
    }
    config = {**GKE, "gpu-cluster:nodePools": [pool]}
    text = _refused(config, "nodePools[0].capacity.queuedProvisioning")
    assert "workload: kubeflow" in text and "queuedProvisioning: false" in text
    pool["capacity"]["queuedProvisioning"] = False
    assert preview_config("generated", config).exit_code == 0
