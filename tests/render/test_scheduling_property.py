"""Property: rendered Kueue quotas never promise more GPUs than a pool has at maxNodes unless ``overcommit`` is
declared, and validation refuses exactly the specs that would (no false alarms, no misses)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from render.kueue import render_kueue
from stacks.validate.issues import SpecError
from stacks.plan.facts import pool_facts
from stacks.validate.load import load_spec
from tests.support.spec.scheduling_fixtures import CAT

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GKE_MACHINES = {"a3-highgpu-8g": 8, "g2-standard-24": 2, "g2-standard-8": 1}
"""Machine type -> GPUs per node (cross-checked against the catalog below)."""
BASE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-central1",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
}


@st.composite
def scheduled_stacks(draw) -> dict[str, Any]:
    n_pools = draw(st.integers(1, 3))
    pools = []
    for i in range(n_pools):
        machine = draw(st.sampled_from(sorted(GKE_MACHINES)))
        max_nodes = draw(st.integers(1, 6))
        pools.append(
            {
                "name": f"pool-{i}",
                "machineType": machine,
                "zones": ["us-central1-a"],
                "minNodes": draw(st.integers(0, max_nodes)),
                "maxNodes": max_nodes,
            }
        )
    queues = []
    for q in range(draw(st.integers(1, 4))):
        chosen = draw(st.lists(st.sampled_from([p["name"] for p in pools]), min_size=1, max_size=n_pools, unique=True))
        quotas = []
        for pool in chosen:
            gpus = draw(st.integers(0, 40))
            quota: dict[str, Any] = {"pool": pool, "gpus": gpus}
            if draw(st.booleans()):
                quota["borrowingLimit"] = draw(st.integers(0, 16))
            if draw(st.booleans()):
                quota["lendingLimit"] = draw(st.integers(0, gpus))
            quotas.append(quota)
        queues.append({"name": f"team-{q}", "quotas": quotas, "fairShareWeight": draw(st.integers(1, 4))})
    sched = {
        "workload": "kubeflow",
        "cohort": "ml",
        "overcommit": draw(st.booleans()),
        "queues": queues,
        "topology": {
            "mode": draw(st.sampled_from(["preferred", "none"])),
            "level": draw(st.sampled_from(["host", "block", "zone"])),
        },
    }
    return {**copy.deepcopy(BASE), "nodePools": pools, "scheduling": sched}


def _promised(raw: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for queue in raw["scheduling"]["queues"]:
        for quota in queue["quotas"]:
            out[quota["pool"]] = out.get(quota["pool"], 0) + quota["gpus"]
    return out


@SETTINGS
@given(scheduled_stacks())
def test_rendered_quotas_never_exceed_capacity_unless_overcommit_is_declared(raw):
    capacity = {p["name"]: GKE_MACHINES[p["machineType"]] * p["maxNodes"] for p in raw["nodePools"]}
    fits = all(total <= capacity[pool] for pool, total in _promised(raw).items())
    try:
        spec, _ = load_spec(copy.deepcopy(raw), CAT)
    except SpecError as exc:
        event("refused: quota exceeds capacity")
        assert not fits and not raw["scheduling"]["overcommit"], [str(e) for e in exc.errors]
        assert all("scheduling.queues" in e.path and e.path.endswith(".gpus") for e in exc.errors)
        return
    assert fits or raw["scheduling"]["overcommit"]
    event("accepted" if fits else "accepted: overcommit declared")
    facts = [pool_facts(spec, p, CAT) for p in spec.node_pools]
    assert {f.name: f.max_gpus for f in facts} == capacity  # the table above agrees with the catalog
    rendered: dict[str, int] = {}
    objects = render_kueue(spec.scheduling, facts)
    pool_of = {name: pool for pool, name in objects.flavor_names().items()}  # flavors are <pool>-<hash>
    for cq in objects.cluster_queues:
        for flavor in cq["spec"]["resourceGroups"][0]["flavors"]:
            pool = pool_of[flavor["name"]]
            rendered[pool] = rendered.get(pool, 0) + flavor["resources"][0]["nominalQuota"]
    assert rendered == {k: v for k, v in _promised(raw).items()}
    if not spec.scheduling.overcommit:
        assert all(rendered[pool] <= capacity[pool] for pool in rendered)
