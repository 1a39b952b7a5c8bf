"""The job-size factor of Slurm's multifactor priority as Slurm 26.05 sets it for a pending job (favor large, the
rendered default): ``(nodes / cluster nodes + CPUs / cluster CPUs) / 2`` with ``total_cpus`` when set, else the CPUs
the job asks for (``DefCpuPerGPU`` per GPU) (priority_multifactor.c l.2132-2188, at slurm-26-05-3-1). On an
exclusive partition backfill tests each job as whole-node and that will-run test sets ``total_cpus`` to the whole
nodes (backfill.c l.3180, select/cons_tres/job_test.c l.2195-2207): from the next ``PriorityCalcPeriod`` a 1-GPU job
and an 8-GPU job on one node have the same size."""

from __future__ import annotations

from tests.support.whatif.stacks import cluster, slurm_config
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs

FIXED = SimOptions(nodes_up="max", spot_interruptions=False)
POOL = {
    "name": "h100",
    "machineType": "a3-highgpu-8g",
    "zones": ["us-central1-a"],
    "minNodes": 1,
    "maxNodes": 1,
    "multiNode": True,  # exclusive: a job holds the whole node (195 CPUs Slurm may allocate, DefCpuPerGPU 24)
}


def test_the_eight_gpu_job_outranks_the_one_gpu_job_on_an_exclusive_node():
    # By hand: X (1 GPU) = (1/1 + 24/195) / 2 x 1000 = 561.5; Y (8 GPUs) = (1/1 + 192/195) / 2 x 1000 = 992.3.
    # F holds the node until 120 s and no PriorityCalcPeriod passes before then, so the sizes set at submission
    # (from the requested CPUs) still rank the queue although the 30 s backfill pass has set both to a whole node:
    # Y starts at 120, X after it.
    cfg = slurm_config([POOL], [{"name": "t", "quotas": [{"pool": "h100", "gpus": 8}]}], slurm={"preemptType": "none"})
    jobs = [Job("F", 0, "t", 8, run_s=120), Job("X", 10, "t", 1, run_s=100), Job("Y", 11, "t", 8, run_s=100)]
    res = simulate_jobs(cluster(cfg, FIXED), jobs, 0, FIXED)
    assert res.jobs["Y"].starts == (120.0,)
    assert res.jobs["X"].starts == (220.0,)


def test_after_a_backfill_test_and_a_recalculation_the_older_one_gpu_job_goes_first_on_an_exclusive_node():
    # F holds the node to 600 s. The 30 s backfill pass tests X and Y as whole-node (both find the node at 600), so
    # both total_cpus = 195; at the 300 s recalculation both sizes are (1/1 + 195/195) / 2 = 1.0, and X is older.
    # Slurm starts X at 600 and Y at 700 (a size from the requested CPUs alone would start Y first).
    cfg = slurm_config([POOL], [{"name": "t", "quotas": [{"pool": "h100", "gpus": 8}]}], slurm={"preemptType": "none"})
    jobs = [
        Job("F", 0, "t", 8, run_s=600, time_limit_s=600),
        Job("X", 10, "t", 1, run_s=100, time_limit_s=100),
        Job("Y", 11, "t", 8, run_s=100, time_limit_s=100),
    ]
    res = simulate_jobs(cluster(cfg, FIXED), jobs, 0, FIXED)
    assert res.jobs["X"].starts == (600.0,)
    assert res.jobs["Y"].starts == (700.0,)
