"""The job-size factor of Slurm's multifactor priority as Slurm 26.05 sets it for a pending job (favor large, the
rendered default): ``(nodes / cluster nodes + CPUs / cluster CPUs) / 2`` with the CPUs the job *asks for*
(``DefCpuPerGPU`` per GPU), not the whole nodes of an exclusive partition, which Slurm counts only once the job is
selected to run (priority_multifactor.c l.2132-2188, select/cons_tres/job_test.c l.1968 and l.2196-2205, at
slurm-26-05-3-1)."""

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
    # F holds the node until 120 s and no PriorityCalcPeriod passes before then: Y starts at 120, X after it.
    cfg = slurm_config([POOL], [{"name": "t", "quotas": [{"pool": "h100", "gpus": 8}]}], slurm={"preemptType": "none"})
    jobs = [Job("F", 0, "t", 8, run_s=120), Job("X", 10, "t", 1, run_s=100), Job("Y", 11, "t", 8, run_s=100)]
    res = simulate_jobs(cluster(cfg, FIXED), jobs, 0, FIXED)
    assert res.jobs["Y"].starts == (120.0,)
    assert res.jobs["X"].starts == (220.0,)
