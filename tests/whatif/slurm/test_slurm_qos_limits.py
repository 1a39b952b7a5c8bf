"""QOS limits in the what-if as slurmctld enforces the rendered ones (``DenyOnLimit``; Slurm 26.05
src/slurmctld/acct_policy.c): a time limit over ``MaxWall`` or a job larger than a GPU limit is refused at submission;
a job that would take its user over ``MaxTRESPerUser`` (or its QOS over ``GrpTRES``) waits, and lets other jobs pass."""

from __future__ import annotations

from tests.support.whatif.stacks import cluster, h100_pool, slurm_config
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs

FIXED = SimOptions(nodes_up="max", spot_interruptions=False)
QUEUES = [{"name": "t", "quotas": [{"pool": "h100", "gpus": 64}]}]
CLASSES = [{"name": "high", "value": 100}, {"name": "low", "value": 1}]


def run(limits, jobs):
    cfg = slurm_config(
        [h100_pool(4)], QUEUES, priorityClasses=CLASSES, overcommit=True, slurm={"qosLimits": {"low": limits}}
    )
    return simulate_jobs(cluster(cfg, FIXED), jobs, 0, FIXED)


def test_a_time_limit_over_maxwall_is_refused_at_submission_and_one_within_runs():
    res = run(
        {"maxWallMinutes": 60},
        [
            Job("over", 0, "t", 8, run_s=600, time_limit_s=7200, priority="low"),
            Job("within", 0, "t", 8, run_s=600, time_limit_s=3600, priority="low"),
            Job("other-qos", 0, "t", 8, run_s=600, time_limit_s=7200, priority="high"),
        ],
    )
    assert res.jobs["over"].start_s is None and "MaxWall 60 min" in (res.jobs["over"].never_startable or "")
    assert res.jobs["within"].start_s == 0 and res.jobs["other-qos"].start_s == 0


def test_a_user_at_maxtresperuser_waits_while_another_users_job_starts():
    res = run(
        {"maxGpusPerUser": 8},
        [
            Job("u1", 0, "t", 8, run_s=600, priority="low", user="ana"),
            Job("u2", 1, "t", 8, run_s=600, priority="low", user="ana"),
            Job("v1", 2, "t", 8, run_s=600, priority="low", user="bo"),
            Job("big", 3, "t", 8, nodes=2, run_s=600, priority="low", user="bo"),
        ],
    )
    assert res.jobs["u1"].start_s == 0
    assert res.jobs["u2"].start_s == 600  # QOSMaxGRESPerUser until u1 ends, nodes free all along
    assert res.jobs["v1"].start_s is not None and res.jobs["v1"].start_s < 60  # not held back by ana's job
    assert res.jobs["big"].start_s is None and "MaxTRESPerUser" in (res.jobs["big"].never_startable or "")


def test_grptres_on_a_qos_caps_the_class_across_users():
    res = run(
        {"grpGpus": 16},
        [Job(f"j{i}", i, "t", 8, run_s=600, priority="low", user=f"u{i}") for i in range(3)]
        + [Job("hi", 5, "t", 8, run_s=600, priority="high")],
    )
    starts = sorted(res.jobs[f"j{i}"].start_s for i in range(3))
    assert starts[0] < 60 and starts[1] < 60 and starts[2] == 600  # the third waits for a low job to end
    assert res.jobs["hi"].start_s is not None and res.jobs["hi"].start_s < 60  # another QOS is not capped


def test_a_job_without_a_time_limit_gets_maxwall_and_is_killed_at_it():
    res = run(
        {"maxWallMinutes": 10},
        [
            Job("no-limit", 0, "t", 8, run_s=3600, priority="low"),
            Job("other-qos", 0, "t", 8, run_s=3600, priority="high"),
        ],
    )
    assert res.jobs["no-limit"].start_s == 0 and res.jobs["no-limit"].end_s == 600  # killed at MaxWall
    assert res.jobs["other-qos"].end_s == 3600


def test_a_job_list_names_each_jobs_user(tmp_path):
    from whatif.workload.load import load_workload

    path = tmp_path / "w.yaml"
    path.write_text(
        "kind: jobs\njobs:\n"
        "  - {id: a, submitS: 0, queue: t, gpusPerNode: 8, runS: 60, priority: low, user: ana}\n"
        "  - {id: b, submitS: 0, queue: t, gpusPerNode: 8, runS: 60, priority: low}\n"
    )
    cfg = slurm_config([h100_pool(4)], QUEUES, priorityClasses=CLASSES, overcommit=True)
    jobs = {j.id: j for j in load_workload(path, cluster(cfg, FIXED), 0).jobs}
    assert (jobs["a"].user, jobs["b"].user) == ("ana", None)
