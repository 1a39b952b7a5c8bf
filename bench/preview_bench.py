"""Offline preview time per example stack and per synthetic stack (50/100/200/400 pools), as ratios to floors
measured in the same run:

- the **SDK floor** (``bench/sdk_floor.py``): a fresh interpreter that imports exactly the provider classes the stack
  registers and registers the same resources with the recorded inputs under Pulumi mocks; no validation, planning,
  rendering, cost or policy. What the project adds is preview / SDK floor.
- the **import floor**: ``python -c "import pulumi, pulumi_gcp, pulumi_aws, pulumi_kubernetes"``.

Each case runs in a fresh interpreter (like a user typing the command), with the policy pack on (the default
in-process path; ``--pack-subprocess`` times the CLI's path instead), with Python's bytecode cache on as on a user's
machine (``timing.cached_bytecode_env``), the floor and the preview run alternately (one warm-up run of each before the
first case). CPU time (user + system, children included) is
the ratio's measure: on a shared machine the wall clock also counts other people's work; wall times are printed too.
Peak memory is the preview process's largest resident set.

    .venv/bin/python bench/preview_bench.py [--runs 3] [--pools 50,100,200,400] [--pack-subprocess]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.sdk_floor import resource_count  # noqa: E402
from bench.timing import Measured, cached_bytecode_env, measure_interleaved, write_synthetic_stack  # noqa: E402

IMPORT_FLOOR = [sys.executable, "-c", "import pulumi, pulumi_gcp, pulumi_aws, pulumi_kubernetes"]
TARGETS = {"example": 1.25, "synthetic-200": 1.5}
"""docs/benchmarks.md: preview / SDK floor (CPU) at most this."""


def floor_and_preview(
    stack: str, path: Path, tmp: Path, runs: int, extra: list[str], warm_up: bool
) -> tuple[Measured, Measured, int]:
    """The SDK floor and the preview of one stack, run alternately (``measure_interleaved``), both with the
    bytecode cache a user's machine keeps (``cached_bytecode_env``; ``warm_up``: one unmeasured run of each first,
    needed once per bench run: the floor imports no project module and the provider modules' bytecode is
    installed with them)."""
    recorded = tmp / f"floor-{stack}.json"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "sdk_floor.py"), "record", stack, str(path), str(recorded)],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    count = resource_count(json.loads(recorded.read_text()))  # a fleet manager's: its workers' too
    replay = [sys.executable, str(ROOT / "bench" / "sdk_floor.py"), "replay", str(recorded)]
    preview = [sys.executable, "-m", "preview", "--stack", stack, "--stack-file", str(path), "--format", "json", *extra]
    floor_m, preview_m = measure_interleaved(
        [(replay, (0,)), (preview, (0, 1))], ROOT, runs, warm_up=warm_up, env=cached_bytecode_env()
    )  # a floor that crashed would look fast
    return floor_m, preview_m, count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pools", default="50,100,200,400", help="synthetic stack sizes, comma-separated")
    parser.add_argument("--pack-subprocess", action="store_true", help="boot the pack as the CLI does")
    parser.add_argument("--only", help="comma-separated example stacks (default: all)")
    args = parser.parse_args()
    extra = ["--policy-pack-subprocess"] if args.pack_subprocess else []

    rows = []
    load_before = os.getloadavg()  # the ratios are from a shared machine: say how loaded it was
    print(f"load average at start: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        imports = measure_interleaved([(IMPORT_FLOOR, (0,))], ROOT, args.runs, env=cached_bytecode_env())[0]
        cases = [
            (p.name[len("Pulumi.") : -len(".yaml")], p)
            for p in sorted(ROOT.glob("Pulumi.*.yaml"))
            if p.name != "Pulumi.yaml"
        ]
        if args.only:
            cases = [c for c in cases if c[0] in args.only.split(",")]
        cases += [write_synthetic_stack(tmp, int(n)) for n in args.pools.split(",") if n]
        for i, (stack, path) in enumerate(cases):
            floor, preview, count = floor_and_preview(stack, path, tmp, args.runs, extra, warm_up=i == 0)
            rows.append(
                {
                    "stack": stack,
                    "resources": count,
                    "preview": preview.__dict__,
                    "sdk_floor": floor.__dict__,
                    "x_sdk_floor_cpu": round(preview.cpu_s / floor.cpu_s, 2),
                    "x_sdk_floor_wall": round(preview.wall_s / floor.wall_s, 2),
                    "x_import_floor_cpu": round(preview.cpu_s / imports.cpu_s, 2),
                }
            )
            r = rows[-1]
            print(
                f"{stack:<22}{count:>6}{preview.cpu_s:>9.2f}{floor.cpu_s:>9.2f}{r['x_sdk_floor_cpu']:>8.2f}"
                f"{preview.wall_s:>9.2f}{floor.wall_s:>9.2f}{r['x_sdk_floor_wall']:>8.2f}"
                f"{r['x_import_floor_cpu']:>9.2f}{preview.peak_rss_mib:>9.0f}",
                flush=True,
            )
    print(
        f"(columns: stack, resources, preview CPU s, SDK floor CPU s, x SDK floor (CPU), preview wall s, floor "
        f"wall s, x SDK floor (wall), x import floor (CPU; {imports.cpu_s:.2f} s), preview peak RSS MiB; "
        f"median of {args.runs}{', pack as the CLI boots it' if extra else ''})"
    )
    load_after = os.getloadavg()
    print(f"load average at end: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "preview.json").write_text(
        json.dumps(
            {
                "date": datetime.date.today().isoformat(),
                "runs": args.runs,
                "pack_subprocess": bool(extra),
                "import_floor": imports.__dict__,
                "load_average": {"start": load_before, "end": load_after},
                "targets": TARGETS,
                "cases": rows,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
