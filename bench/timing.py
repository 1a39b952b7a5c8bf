"""Shared by the benchmarks: wall time, CPU time and peak memory of a command in fresh interpreters (medians of N
runs), and the synthetic stack file.

CPU time (user + system of the process and every child it waited for, from ``wait4``) is the steadier measure on a
machine shared with other work: the wall clock also counts the time other processes held the CPU.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
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
    cpu_samples_s: tuple[float, ...] = ()
    """CPU time of each run, in order (one per round of ``measure_interleaved``)."""


def cached_bytecode_env() -> dict[str, str]:
    """The environment of a user's machine: Python keeps compiled bytecode next to the sources (``__pycache__``, which
    git ignores), so a user's second run of a command reads it. A sandbox may set ``PYTHONDONTWRITEBYTECODE`` (this
    development machine does): then every run compiles every project module from source again (about 0.4 s CPU for
    a preview), which the SDK floor, importing no project module, never pays."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def uncached_bytecode_env(*trees: Path) -> dict[str, str]:
    """The environment of CI and of this sandbox: ``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__`` in the project
    ``trees`` (removed here: Python would still read bytecode an earlier cached run left), so every run compiles
    every project module from source. The installed packages keep the bytecode pip compiled at install time."""
    for tree in trees:
        for folder, subdirs, _ in os.walk(tree):  # symlinks (.venv) are not followed
            subdirs[:] = [d for d in subdirs if not d.startswith(".")]
            if "__pycache__" in subdirs:
                subdirs.remove("__pycache__")
                shutil.rmtree(Path(folder) / "__pycache__")
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def run_once(
    cmd: list[str], cwd: Path, ok_codes: tuple[int, ...] | None = (0, 1), env: dict[str, str] | None = None
) -> tuple[float, float, float]:
    """One fresh run: ``(wall s, CPU s, peak RSS MiB)``; exit codes outside ``ok_codes`` abort (None: any)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall_s = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if ok_codes is not None and code not in ok_codes:  # 1 = policy violations, expected for examples
        raise SystemExit(f"{' '.join(cmd)} exited {code}")
    return wall_s, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # KiB on Linux


def measure(cmd: list[str], cwd: Path, runs: int, ok_codes: tuple[int, ...] | None = (0, 1)) -> Measured:
    """``runs`` fresh runs; exit codes outside ``ok_codes`` abort (None: any code is fine)."""
    return measure_interleaved([(cmd, ok_codes)], cwd, runs, warm_up=False, env=None)[0]


def measure_interleaved(
    cases: list[tuple[list[str], tuple[int, ...] | None]],
    cwd: Path,
    runs: int,
    warm_up: bool = True,
    env: dict[str, str] | None = None,
    cwds: list[Path] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Measured]:
    """``runs`` rounds, each running every command once in turn (so a load change hits all of them alike), after
    one unmeasured round that fills the bytecode cache (``warm_up``); one ``Measured`` per command. ``cwds``: one
    working directory per command instead of ``cwd``; ``progress`` gets a line after each round."""
    dirs = cwds if cwds is not None else [cwd] * len(cases)
    assert len(dirs) == len(cases), "one working directory per command"
    if warm_up:
        for (cmd, ok_codes), where in zip(cases, dirs):
            run_once(cmd, where, ok_codes, env)
        if progress:
            progress("warm-up round done")
    samples: list[list[tuple[float, float, float]]] = [[] for _ in cases]
    for n in range(runs):
        for i, ((cmd, ok_codes), where) in enumerate(zip(cases, dirs)):
            samples[i].append(run_once(cmd, where, ok_codes, env))
        if progress:
            progress(f"round {n + 1}/{runs} done")
    return [
        Measured(
            statistics.median(s[0] for s in got),
            statistics.median(s[1] for s in got),
            max(s[2] for s in got),
            tuple(s[1] for s in got),
        )
        for got in samples
    ]


def wall(cmd: list[str], cwd: Path, runs: int, ok_codes: tuple[int, ...] | None = (0, 1)) -> float:
    """Median seconds of ``runs`` runs; exit codes outside ``ok_codes`` abort (None: any code is fine)."""
    return measure(cmd, cwd, runs, ok_codes).wall_s


def write_synthetic_stack(directory: Path, pools: int) -> tuple[str, Path]:
    """``(stack name, Pulumi.<stack>.yaml)`` of a synthetic GKE stack with ``pools`` pools."""
    stack = f"synthetic-{pools}"
    path = directory / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump({"config": synthetic_gke_config(pools)}))
    return stack, path
