"""``python -m whatif.serving --stack gke-serving --workload workloads/serving/gke-serving.yaml [--format json]``: a day (or
``hours``) of the stack's serving traffic beside backlogged training, and the answer to "does serving hold its SLO
while the cluster runs at ≥ 80 % utilization?". Exit 0 with the answer, 2 on bad input."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from catalog import load_catalog
from stacks.plan.stack import plan_stack
from stacks.validate.issues import SpecError
from whatif.serving.report import as_dict, text
from whatif.serving.sim import load_training, simulate
from whatif.stack import load_stack_spec
from whatif.yaml_read import safe_load


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m whatif.serving", description=__doc__)
    ap.add_argument("--stack", required=True, help="stack name (Pulumi.<stack>.yaml) with a serving section")
    ap.add_argument("--workload", required=True, type=Path, help="workloads/<stack>.yaml (kind: serving)")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    args = ap.parse_args(argv)
    try:
        spec = load_stack_spec(args.stack)
    except SpecError as exc:
        print(exc, file=sys.stderr)
        return 2
    if spec.serving is None:
        print(f"error: stack {args.stack} has no serving section (gpu-cluster:serving)", file=sys.stderr)
        return 2
    try:
        doc = safe_load(args.workload.read_text(encoding="utf-8")) or {}
        training = load_training(doc)
        hours = int(doc.get("hours", 24))
    except (OSError, KeyError, TypeError, ValueError) as exc:
        print(
            f"error: {args.workload}: {exc}\n  fix: see workloads/serving/gke-serving.yaml for the shape "
            "(hours; training: [{pool, gpusPerJob, checkpointMinutes, terminationGraceSeconds}])",
            file=sys.stderr,
        )
        return 2
    pools = {p.name for p in spec.node_pools}
    bad = [t.pool for t in training if t.pool not in pools]
    if bad or hours < 1:
        print(
            f"error: {args.workload}: training pool {bad} not in the stack (allowed: {sorted(pools)}) or hours < 1",
            file=sys.stderr,
        )
        return 2
    plan = plan_stack(spec, load_catalog())
    result = simulate(spec, {f.name: f for f in plan.facts}, training, hours)
    if args.format == "json":
        print(json.dumps(as_dict(spec, result), indent=2))
    else:
        print(text(args.stack, spec, result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
