"""Time to evaluate the policy pack, as a ratio to the offline preview without policies.

Cases: the 512-GPU example (gke-h100-512) and a synthetic 200-pool stack. Each is previewed in a fresh
interpreter with --no-policies and with the pack (booted as the CLI boots it, then Analyze per resource and
AnalyzeStack over gRPC); the median of N runs is reported. Only ratios within one run mean anything on a shared
machine; no test asserts a time.

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
from bench.timing import wall, write_synthetic_stack  # noqa: E402


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
            without = wall(base + ["--no-policies"], ROOT, args.runs, ok_codes=None)
            with_pack = wall(base, ROOT, args.runs, ok_codes=None)
            rows.append({"stack": stack, "without_policies_s": round(without, 3), "with_policies_s": round(with_pack, 3),
                         "policy_s": round(with_pack - without, 3), "ratio": round(with_pack / without, 2)})
    print(f"{'stack':<18}{'no pack s':>10}{'pack s':>10}{'pack adds s':>13}{'ratio':>8}   (median of {args.runs})")
    for r in rows:
        print(f"{r['stack']:<18}{r['without_policies_s']:>10.3f}{r['with_policies_s']:>10.3f}{r['policy_s']:>13.3f}"
              f"{r['ratio']:>8.2f}")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "policy.json").write_text(json.dumps({"runs": args.runs, "cases": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
