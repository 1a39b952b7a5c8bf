"""Slurm power saving (``scheduling.slurm.scaling``) in the simulator: a pool with minNodes < maxNodes starts at
minNodes, resumes nodes for jobs that do not fit (after the catalog's provisioning delay), suspends them after
SuspendTime and is billed only while its Kubernetes nodes exist (until the node autoscaler removes an empty one)."""

from __future__ import annotations

from tests.support.whatif.stacks import cluster, h100_pool, slurm_config
from whatif.autoscale import SCALE_DOWN_UNNEEDED_S
from whatif.run import simulate_jobs
from whatif.model import Job, SimOptions

MIN = SimOptions(nodes_up="min", spot_interruptions=False)
QUEUE = [{"name": "a", "quotas": [{"pool": "h100", "gpus": 32}]}]
PROVISION_S = 300.0  # catalog/data/provisioning.csv, gcp on-demand
SUSPEND_S = 600.0  # scaling.idleMinutes default 10


def run(cfg, jobs, options=MIN):
    c = cluster(cfg, options)
    return c, simulate_jobs(c, jobs, 0, options)


def test_a_scaling_pool_resumes_nodes_for_a_job_and_is_billed_only_while_they_exist():
    cfg = slurm_config([h100_pool(4, min_nodes=1)], QUEUE)
    c, res = run(cfg, [Job("one", 0, "a", 8, run_s=1000), Job("two", 1, "a", 8, nodes=2, run_s=1000)])
    assert c.slurm is not None and c.slurm.power is not None and c.slurm.power.pools == {"h100": 1}
    assert res.jobs["one"].start_s == 0 and res.jobs["one"].nodes == ("h100-0",)
    # nodes 1 and 2 resumed at 1 s and up at 301 s; the job leaves CONFIGURING at slurmctld's next periodic job
    # pass (every 30 s): 330 s
    assert res.jobs["two"].start_s == 330
    assert res.jobs["two"].nodes == ("h100-1", "h100-2")
    # node 0 (minNodes) is paid until the last job ends (1330 s); nodes 1-2 from their resume at 1 s until their
    # Kubernetes nodes go after the run: idle from 1330, suspended at the power-save pass at 1930 (SuspendTime),
    # removed 10 min later; node 3 is never paid for
    assert res.pools["h100"].paid_node_s == 1330 + 2 * (1330 + SUSPEND_S + SCALE_DOWN_UNNEEDED_S - 1)


def test_idle_nodes_are_suspended_after_suspend_time_and_paid_until_their_node_goes():
    cfg = slurm_config([h100_pool(4, min_nodes=1)], QUEUE)
    jobs = [Job("pair", 0, "a", 8, nodes=2, run_s=100), Job("late", 5000, "a", 8, nodes=1, run_s=10)]
    _, res = run(cfg, jobs)
    assert res.jobs["pair"].start_s == PROVISION_S and res.jobs["pair"].nodes == ("h100-0", "h100-1")  # 300: a pass
    assert res.jobs["late"].start_s == 5000 and res.jobs["late"].nodes == ("h100-0",)
    # node 1 idle from 400, suspended at 1000 (SuspendTime), its pod goes and the empty node 10 min later
    node1 = (400 + SUSPEND_S + SCALE_DOWN_UNNEEDED_S) - 0
    # node 0 (minNodes) is never suspended: paid for the whole run (5010 s)
    assert res.pools["h100"].paid_node_s == 5010 + node1


def test_a_node_below_the_highest_ordinal_in_use_keeps_its_pod_and_stays_paid():
    """SuspendProgram lowers replicas only to the highest ordinal still powered up: node 1 idles and is suspended
    while node 2 runs, but its pod (and node) stay until node 2 goes too."""
    cfg = slurm_config([h100_pool(3, min_nodes=0)], [{"name": "a", "quotas": [{"pool": "h100", "gpus": 24}]}])
    jobs = [
        Job("short", 0, "a", 8, nodes=1, run_s=100),
        Job("long", 1, "a", 8, nodes=1, run_s=5000),
        Job("third", 2, "a", 8, nodes=1, run_s=5000),
    ]
    _, res = run(cfg, jobs)
    assert {res.jobs[j].nodes for j in ("short", "long", "third")} == {("h100-0",), ("h100-1",), ("h100-2",)}
    assert res.jobs["short"].nodes == ("h100-0",)
    # short runs 300-400 on node 0, long and third 330-5330 on nodes 1 and 2 (resumed at 1 and 2 s, up at 301 and
    # 302, started at the 330 s job pass). Node 0 is suspended at 1000 but is below the highest ordinal up (2):
    # paid on, until node 2 is suspended too (5930) and the three Kubernetes nodes go 10 min later
    last = 5330 + SUSPEND_S + SCALE_DOWN_UNNEEDED_S
    assert res.pools["h100"].paid_node_s == (last - 0) + (last - 1) + (last - 2)


def test_without_scaling_the_pool_runs_max_nodes_all_the_time():
    cfg = slurm_config([h100_pool(4, min_nodes=1)], QUEUE, slurm={"scaling": {"enabled": False}})
    c, res = run(cfg, [Job("one", 0, "a", 8, run_s=1000)])
    assert c.slurm is not None and c.slurm.power is None
    assert res.pools["h100"].paid_node_s == 4 * 1000
