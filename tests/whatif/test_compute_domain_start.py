"""The ComputeDomain start on a rack-scale NVLink pool's start path (so GB200 start times are not under-estimated): a
job's pods start only once every IMEX daemon of their ComputeDomain is Ready (dra-driver-nvidia-gpu#1107), ~8 min for
256 pods upstream (#816), so the what-if's time to running and the preview's largest gang include
``compute_domain_s_per_pod`` per pod on GB200 pools (every Kueue job, cold or warm; a Slinky NodeSet only as its nodes
join), and ``--assume`` overrides it."""

from __future__ import annotations

import dataclasses
import math

import pytest

from catalog.start_path import load_start_path
from stacks.plan.start_time import factors, overhead_s
from preview.run import preview_stack
from tests.support.whatif.stacks import cluster, kueue_config, slurm_config
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs

F = factors()
FIXED = SimOptions(nodes_up="max", spot_interruptions=False)
PER_POD = F["compute_domain_s_per_pod"]


def gb200_pool(nodes: int = 18) -> dict:
    return {
        "name": "gb200",
        "machineType": "a4x-highgpu-4g",
        "zones": ["us-central1-a"],
        "zoneAvailabilityOverride": {"zones": ["us-central1-a"], "reason": "test reservation"},
        "minNodes": nodes,
        "maxNodes": nodes,
        "multiNode": True,
        "capacity": {"type": "reservation", "reservation": "r", "reservationBlock": "b"},
    }


def gb200_cluster(assume: dict[str, float] | None = None):
    cfg = kueue_config([gb200_pool()], [{"name": "a", "quotas": [{"pool": "gb200", "gpus": 72}]}])
    cfg["cluster"]["minMasterVersion"] = "1.35"
    return cluster(cfg, dataclasses.replace(FIXED, assume=assume or {}))


def test_the_factor_is_the_upstream_figure_per_pod_and_overridable():
    f = load_start_path()["compute_domain_s_per_pod"]
    assert f.kind == "derived" and "816" in f.source
    assert 256 * f.value == pytest.approx(8 * 60)  # ~8 min for 256 pods in one ComputeDomain
    assert factors({"compute_domain_s_per_pod": 0})["compute_domain_s_per_pod"] == 0


def test_a_gb200_gang_waits_for_its_compute_domain_cold_and_warm():
    c = gb200_cluster()
    assert c.pools["gb200"].compute_domains
    jobs = [Job("cold", 0, "a", 4, nodes=18, run_s=1000), Job("warm", 2000, "a", 4, nodes=18, run_s=100)]
    res = simulate_jobs(c, jobs, 0, FIXED)
    pull = c.pools["gb200"].pull_s
    cd = 18 * PER_POD  # 33.75 s for one rack
    assert res.jobs["cold"].running_s == pytest.approx(pull + overhead_s(18, F) + cd)
    assert res.jobs["warm"].running_s == pytest.approx(2000 + overhead_s(18, F) + cd)  # image there, domain not


def test_assume_zero_removes_the_compute_domain_start():
    c = gb200_cluster({"compute_domain_s_per_pod": 0})
    res = simulate_jobs(c, [Job("j", 0, "a", 4, nodes=9, run_s=100)], 0, FIXED)
    assert res.jobs["j"].running_s == pytest.approx(c.pools["gb200"].pull_s + overhead_s(9, F))


@pytest.mark.parametrize("stack, warm_cd", [("gke-a4x-nvl72", True), ("eks-p6e-gb200", False)])
def test_the_preview_largest_gang_includes_the_compute_domain(stack, warm_cd):
    rows = {r["pool"]: r for r in preview_stack(stack).as_dict()["podStart"]}
    g = rows["gb200"]["largestGang"]
    pods = g["pods"]
    assert g["computeDomainS"] == pytest.approx(pods * PER_POD, abs=0.1) and g["computeDomainWarm"] is warm_cd
    cold = g["provisionS"] + g["pullS"] + overhead_s(pods, F) + pods * PER_POD
    assert g["coldS"] == pytest.approx(cold, abs=0.2)
    # Kueue: admission, scheduling, pod start and the ComputeDomain; Slurm (slurmd pods up): the measured sbatch path
    warm = overhead_s(pods, F) + pods * PER_POD if warm_cd else F["slurm_warm_start_s"]
    assert g["warmS"] == pytest.approx(warm, abs=0.1)


def test_pools_without_a_compute_domain_show_none():
    rows = preview_stack("gke-kueue").as_dict()["podStart"]
    assert rows and all("computeDomainS" not in r["largestGang"] for r in rows)


def test_the_largest_gang_is_what_the_rendered_runtimes_can_place():
    # gke-a4x-nvl72 requires gangs inside one NVLink domain, but its two racks also get the block runtime
    # (torch-gb200-block, slices of one rack): the largest gang is both racks, 36 pods; one rack alone is 18
    from preview.engine import PROJECT_ROOT, read_stack_file

    rows = {r["pool"]: r for r in preview_stack("gke-a4x-nvl72").as_dict()["podStart"]}
    assert rows["gb200"]["largestGang"]["pods"] == 36
    assert "overPodsReadyTimeoutS" not in rows["gb200"]["largestGang"]  # the timeout is raised for it
    cfg = read_stack_file(PROJECT_ROOT / "Pulumi.gke-a4x-nvl72.yaml")
    pool = cfg["gpu-cluster:nodePools"][0]
    pool.update(racks=1, minNodes=18, maxNodes=18)
    cfg["gpu-cluster:scheduling"]["queues"][0]["quotas"][0]["gpus"] = 72
    from stacks.plan.start_time import pod_start_rows
    from stacks.validate.load import decode_config
    from stacks.validate.planned import load_planned

    planned = load_planned(decode_config(cfg))
    plans = [p.pod_start for p in planned.plan.pools.values()]
    (row,) = pod_start_rows(planned.spec, plans, list(planned.plan.facts))
    assert row["largestGang"]["pods"] == 18


def test_a_cold_start_over_the_pods_ready_timeout_is_flagged():
    from preview.engine import PROJECT_ROOT, read_stack_file
    from preview.render.pod_start import gang_cell
    from stacks.plan.pod_start import pod_start_plan
    from stacks.plan.start_time import largest_gang
    from stacks.validate.load import decode_config, load_spec
    from catalog import load_catalog
    from stacks.plan.facts import pool_facts

    cfg = read_stack_file(PROJECT_ROOT / "Pulumi.gke-a4x-nvl72.yaml")
    spec, _ = load_spec(decode_config(cfg))
    pool = spec.node_pools[0]
    g = largest_gang(spec, pool, pod_start_plan(spec.cloud, pool), pool_facts(spec, pool, load_catalog()), timeout=300)
    assert g["coldS"] > 300 and g["overPodsReadyTimeoutS"] == 300
    assert "! cold start over waitForPodsReady (300 s): evicted at the timeout and requeued" in gang_cell(g)


def test_a_slurm_resume_on_a_gb200_pool_waits_for_the_compute_domain_of_its_new_slurmd_pods():
    """A pool that follows the queue creates slurmd pods at each resume; they claim the IMEX channel, so their slurmd
    registers only once the domain's daemons are Ready: provisioning + the resumed pods' ComputeDomain start, then
    slurmctld's next 30 s job pass."""
    pool = {**gb200_pool(), "minNodes": 0}
    cfg = slurm_config([pool], [{"name": "a", "quotas": [{"pool": "gb200", "gpus": 72}]}])
    cfg["cluster"]["minMasterVersion"] = "1.35"
    options = SimOptions(nodes_up="min", spot_interruptions=False)
    c = cluster(cfg, options)
    assert c.pools["gb200"].compute_domains and c.slurm is not None and c.slurm.power is not None
    res = simulate_jobs(c, [Job("rack", 0, "a", 4, nodes=18, run_s=1000)], 0, options)
    up = c.pools["gb200"].provision_s + 18 * PER_POD  # 300 + 33.75 s
    assert res.jobs["rack"].start_s == math.ceil(up / 30) * 30 == 360  # without the domain: 300
    # the same pool with the factor at 0 starts at the first pass after its nodes are up
    c0 = cluster(cfg, dataclasses.replace(options, assume={"compute_domain_s_per_pod": 0}))
    res0 = simulate_jobs(c0, [Job("rack", 0, "a", 4, nodes=18, run_s=1000)], 0, options)
    assert res0.jobs["rack"].start_s == math.ceil(c0.pools["gb200"].provision_s / 30) * 30
