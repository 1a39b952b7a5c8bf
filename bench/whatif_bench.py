"""Time of a what-if simulation, as a ratio to the import floor (a fresh interpreter importing the simulator, the spec
and validation packages, pydantic, PyYAML and rich without simulating anything).

Cases: a week of the 512-GPU example (gke-h100-512, Slurm, ~9,600 jobs from workloads/gke-h100-512.yaml), three days
of gke-kueue (Kueue, autoscaled spot pool), and the 14-day Alibaba openb window on the Kueue replay stack (when
../shared/traces is present). Each case runs ``python -m whatif ... --format json`` in a fresh interpreter; the median
of N runs is reported, wall clock and CPU time (user + system; the steadier one on a shared machine). Only ratios
within one run mean anything; no test asserts a time.

    .venv/bin/python bench/whatif_bench.py [--runs 3]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.timing import measure  # noqa: E402

CASES = [
    ("gke-h100-512 week (Slurm)", ["--stack", "gke-h100-512", "--workload", "workloads/gke-h100-512.yaml"]),
    ("gke-kueue 3 days (Kueue)", ["--stack", "gke-kueue", "--workload", "workloads/gke-kueue.yaml"]),
    ("Alibaba openb 14 days (Kueue)", ["--stack-file", "workloads/stacks/Pulumi.alibaba-replay-kueue.yaml",
                                       "--workload", "workloads/alibaba-openb.yaml"]),
]
FLOOR = "import whatif.run, whatif.render_text, whatif.workload.profile"


def jobs_of(args: list[str]) -> int:
    from whatif.run import run_whatif
    stack: str | Path = args[1] if args[0] == "--stack" else ROOT / args[1]
    return run_whatif(stack, ROOT / args[3]).report["workload"]["jobs"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    floor_m = measure([sys.executable, "-c", FLOOR], ROOT, args.runs)
    floor, floor_cpu = floor_m.wall_s, floor_m.cpu_s
    rows = []
    for name, cli in CASES:
        if "alibaba" in cli[1] and not (ROOT.parent / "shared" / "traces").exists():
            continue
        m = measure([sys.executable, "-m", "whatif", *cli, "--format", "json"], ROOT, args.runs, ok_codes=(0,))
        took = m.wall_s
        rows.append({"case": name, "jobs": jobs_of(cli), "seconds": round(took, 3), "floor_s": round(floor, 3),
                     "ratio": round(took / floor, 2), "simulation_s": round(took - floor, 3),
                     "cpu_s": round(m.cpu_s, 3), "floor_cpu_s": round(floor_cpu, 3),
                     "cpu_ratio": round(m.cpu_s / floor_cpu, 2)})
    print(f"{'case':<32}{'jobs':>7}{'s':>9}{'floor s':>9}{'ratio':>8}{'sim s':>8}{'cpu s':>8}{'cpu ratio':>10}"
          f"   (median of {args.runs})")
    for r in rows:
        print(f"{r['case']:<32}{r['jobs']:>7}{r['seconds']:>9.2f}{r['floor_s']:>9.2f}{r['ratio']:>8.2f}"
              f"{r['simulation_s']:>8.2f}{r['cpu_s']:>8.2f}{r['cpu_ratio']:>10.2f}")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "whatif.json").write_text(json.dumps({"runs": args.runs, "cases": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
