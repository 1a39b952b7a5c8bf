"""Shared by the benchmarks: median wall time of a command in fresh interpreters, and the synthetic stack file."""
from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

import yaml

from bench.synthetic import synthetic_gke_config


def wall(cmd: list[str], cwd: Path, runs: int, ok_codes: tuple[int, ...] | None = (0, 1)) -> float:
    """Median seconds of ``runs`` runs; exit codes outside ``ok_codes`` abort (None: any code is fine)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
        if ok_codes is not None and done.returncode not in ok_codes:  # 1 = policy violations, expected for examples
            raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}")
    return statistics.median(times)


def write_synthetic_stack(directory: Path, pools: int) -> tuple[str, Path]:
    """``(stack name, Pulumi.<stack>.yaml)`` of a synthetic GKE stack with ``pools`` pools."""
    stack = f"synthetic-{pools}"
    path = directory / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump({"config": synthetic_gke_config(pools)}))
    return stack, path
