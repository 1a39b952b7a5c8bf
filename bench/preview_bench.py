"""Offline preview wall time per example stack and for a synthetic 200-pool stack, as ratios to a floor.

The floor is `python -c "import pulumi, pulumi_gcp, pulumi_aws, pulumi_kubernetes"` measured in the same run: these
machines are noisy, so only ratios within one run mean anything. Each case runs in a fresh interpreter (like a user
typing the command) and the median of N runs is reported.

    .venv/bin/python bench/preview_bench.py [--runs 3] [--pools 200]
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

FLOOR = [sys.executable, "-c", "import pulumi, pulumi_gcp, pulumi_aws, pulumi_kubernetes"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pools", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        synthetic = write_synthetic_stack(Path(tmp), args.pools)
        floor = wall(FLOOR, ROOT, args.runs)
        cases = [(p.name[len("Pulumi."):-len(".yaml")], p) for p in sorted(ROOT.glob("Pulumi.*.yaml"))]
        rows = []
        for stack, path in cases + [synthetic]:
            cmd = [sys.executable, "-m", "preview", "--stack", stack, "--stack-file", str(path), "--format", "json"]
            seconds = wall(cmd, ROOT, args.runs)
            rows.append({"stack": stack, "seconds": round(seconds, 3), "ratio_to_floor": round(seconds / floor, 2)})
    print(f"floor (import pulumi + 3 providers): {floor:.3f} s, median of {args.runs}")
    print(f"{'stack':<24}{'seconds':>10}{'x floor':>10}")
    for r in rows:
        print(f"{r['stack']:<24}{r['seconds']:>10.3f}{r['ratio_to_floor']:>10.2f}")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "preview.json").write_text(json.dumps({"floor_seconds": round(floor, 3), "runs": args.runs,
                                                  "cases": rows}, indent=2))


if __name__ == "__main__":
    main()
