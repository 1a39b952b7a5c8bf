"""Time to evaluate the policy pack, as a ratio to the offline preview without policies (CPU time, children included).

Cases: the 512-GPU example (gke-h100-512) and a synthetic 200-pool stack. Each is previewed in a fresh
interpreter with --no-policies, with the pack served in-process (the preview's default) and with the pack booted as
the CLI boots it (``--policy-pack-subprocess``: Analyze per resource and AnalyzeStack over gRPC); the median of N
runs is reported. Only ratios within one run mean anything on a shared machine; no test asserts a time.

    .venv/bin/python bench/policy_bench.py [--runs 3] [--pools 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.timing import measure, write_synthetic_stack  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pools", type=int, default=200)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        synthetic = write_synthetic_stack(Path(tmp), args.pools)
        for stack, path in (("gke-h100-512", ROOT / "Pulumi.gke-h100-512.yaml"), synthetic):
            base = [sys.executable, "-m", "preview", "--stack", stack, "--stack-file", str(path), "--format", "json"]
            without = measure(base + ["--no-policies"], ROOT, args.runs, ok_codes=None).cpu_s
            in_process = measure(base, ROOT, args.runs, ok_codes=None).cpu_s
            cli = measure(base + ["--policy-pack-subprocess"], ROOT, args.runs, ok_codes=None).cpu_s
            rows.append(
                {
                    "stack": stack,
                    "without_policies_cpu_s": round(without, 3),
                    "in_process_cpu_s": round(in_process, 3),
                    "cli_path_cpu_s": round(cli, 3),
                    "in_process_adds_s": round(in_process - without, 3),
                    "cli_path_adds_s": round(cli - without, 3),
                }
            )
    print(
        f"{'stack':<18}{'no pack':>10}{'in-process':>12}{'CLI path':>10}{'adds (in-process)':>19}{'adds (CLI)':>12}"
        f"   CPU s, median of {args.runs}"
    )
    for r in rows:
        print(
            f"{r['stack']:<18}{r['without_policies_cpu_s']:>10.2f}{r['in_process_cpu_s']:>12.2f}"
            f"{r['cli_path_cpu_s']:>10.2f}{r['in_process_adds_s']:>19.2f}{r['cli_path_adds_s']:>12.2f}"
        )
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "policy.json").write_text(json.dumps({"runs": args.runs, "cases": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
