"""The measurement behind ``bench/slurm_start.py`` (which runs this module in a fresh interpreter: bench/ imports no
test code): sbatch to all tasks running for a 64-node x 8-GPU job on this harness's real slurmctld + 64 slurmd.
The method is in that script's docstring and in docs/benchmarks.md."""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from pathlib import Path


NODES, GPUS = 64, 8
CONFIG = {
    "nodePools": [
        {
            "name": "h100",
            "machineType": "a3-highgpu-8g",
            "zones": ["us-central1-a"],
            "minNodes": NODES,
            "maxNodes": NODES,
            "multiNode": True,
        }
    ],
    "scheduling": {
        "workload": "slurm",
        "queues": [{"name": "team", "quotas": [{"pool": "h100", "gpus": NODES * GPUS}]}],
        "slurm": {"accounting": False, "priorityWeights": {"fairShare": 0, "age": 0}, "allPoolsPartition": False},
    },
}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def main(runs: int = 10) -> dict:
    from catalog import load_catalog
    from stacks.plan.facts import pool_facts
    from stacks.plan.slurm import plan_slurm
    from stacks.validate.load import decode_config, load_spec
    from tests.support.slurm.cluster import SlurmCluster
    from tests.support.slurm.session import real_slurm
    from tests.support.spec.edit import edits
    from tests.support.spec.stack_configs import GKE

    spec, _ = load_spec(decode_config(edits(GKE, {k: CONFIG[k] for k in ("nodePools", "scheduling")})))
    plan = plan_slurm(spec.scheduling, [pool_facts(spec, p, load_catalog()) for p in spec.node_pools])
    times: list[float] = []
    with real_slurm() as real:
        t_up = time.monotonic()
        cluster = SlurmCluster(real.chroot, plan, "bench512", real.key)
        up_s = time.monotonic() - t_up
        try:
            host_out, inside_out = cluster.out_dir
            for i in range(runs):
                mark = f"{inside_out}/run{i}"
                script = f"#!/bin/sh\nsrun --ntasks-per-node={GPUS} /bin/sh -c 'date +%s.%N > {mark}.$SLURM_PROCID'\n"
                (cluster.ctl.dir.host / f"run{i}.sh").write_text(script)
                t0 = time.time()
                out = cluster.ctl.run(
                    "sbatch",
                    "--parsable",
                    "--chdir=/tmp",
                    "-o",
                    "/dev/null",
                    "-N",
                    str(NODES),
                    f"--gres=gpu:{GPUS}",
                    "--exclusive",
                    "--time=5",
                    f"{cluster.ctl.dir.inside}/run{i}.sh",
                )
                assert out.returncode == 0, f"sbatch: {out.stdout}{out.stderr}"
                deadline = time.monotonic() + 300
                while (starts := _marks(host_out, f"run{i}.*")) is None or len(starts) < NODES * GPUS:
                    assert time.monotonic() < deadline, f"run {i}: tasks did not all write their start in 300 s"
                    time.sleep(0.05)
                times.append(max(starts) - t0)
                print(f"run {i}: {times[-1]:.3f} s", file=sys.stderr)
                cluster.wait_ready()  # every node idle before the next run
        finally:
            cluster.stop()
    return {
        "nodes": NODES,
        "gpusPerNode": GPUS,
        "runs": [round(t, 3) for t in times],
        "medianS": round(statistics.median(times), 3),
        "p95S": round(p95(times), 3),
        "clusterUpS": round(up_s, 1),
    }


def _marks(directory: Path, pattern: str) -> list[float] | None:
    """The start times the tasks wrote, or None while a file is still being written (empty or half a line)."""
    out = []
    for path in directory.glob(pattern):
        text = path.read_text()
        if not text.endswith("\n"):
            return None
        out.append(float(text.strip()))
    return out


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10), indent=2))
