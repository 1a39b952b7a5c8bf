"""sbatch to all tasks running for a 64-node x 8-GPU job (512 GPUs) on REAL Slurm 26.05 daemons: one slurmctld and
64 slurmd on this host, each slurmd in its own network namespace (``tests/support/slurm/cluster.py``: Slurm's
multiple-slurmd idea, one daemon per node name on one machine, with namespaces instead of per-node ports so the
rendered slurm.conf stays as the project writes it).

Method: the configuration is what gpu-cluster renders for a GKE stack with one fixed 64-node ``a3-highgpu-8g`` pool
and Slurm (no accounting daemon: it does not take part in a start). Every node idles before each run. A run is
``sbatch -N 64 --gres=gpu:8 --exclusive`` of a script that ``srun``s 8 tasks per node; each task writes its wall
clock start. Time to running = the last task's start - the wall clock just before ``sbatch``. The job ends at once;
the next run waits until every node is idle again. Reported: every run, median and p95 (nearest rank).

    .venv/bin/python bench/slurm_start.py [RUNS]        # default 10; needs the Slurm root and netns privileges

What it does not include: Kubernetes (Slinky's slurmd pods are up before the job, the "warm" start), the image pull,
and the network between real hosts (all 65 daemons share this machine's loopback bridge and its CPUs).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    # the real daemons are the test harness's (tests/support/slurm/): run its measuring module in a fresh interpreter
    sys.exit(subprocess.call([sys.executable, "-m", "tests.support.slurm.start_bench", *sys.argv[1:]], cwd=ROOT))
