"""Shared by the benchmarks: wall time, CPU time and peak memory of a command in fresh interpreters (medians of N
runs), and the synthetic stack file.

CPU time (user + system of the process and every child it waited for, from ``wait4``) is the steadier measure on a
machine shared with other work: the wall clock also counts the time other processes held the CPU.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.synthetic import synthetic_gke_config


@dataclass(frozen=True)
class Measured:
    wall_s: float
    """Median wall time."""
    cpu_s: float
    """Median user + system time, children included."""
    peak_rss_mib: float
    """Largest resident set of the process (or of a child it waited for), over the runs."""


def measure(cmd: list[str], cwd: Path, runs: int, ok_codes: tuple[int, ...] | None = (0, 1)) -> Measured:
    """``runs`` fresh runs; exit codes outside ``ok_codes`` abort (None: any code is fine)."""
    walls, cpus, rss = [], [], 0.0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpus.append(usage.ru_utime + usage.ru_stime)
        rss = max(rss, usage.ru_maxrss / 1024)  # KiB on Linux
        if ok_codes is not None and proc.returncode not in ok_codes:  # 1 = policy violations, expected for examples
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return Measured(statistics.median(walls), statistics.median(cpus), rss)


def wall(cmd: list[str], cwd: Path, runs: int, ok_codes: tuple[int, ...] | None = (0, 1)) -> float:
    """Median seconds of ``runs`` runs; exit codes outside ``ok_codes`` abort (None: any code is fine)."""
    return measure(cmd, cwd, runs, ok_codes).wall_s


def write_synthetic_stack(directory: Path, pools: int) -> tuple[str, Path]:
    """``(stack name, Pulumi.<stack>.yaml)`` of a synthetic GKE stack with ``pools`` pools."""
    stack = f"synthetic-{pools}"
    path = directory / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump({"config": synthetic_gke_config(pools)}))
    return stack, path
