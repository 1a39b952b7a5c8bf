"""Time of a what-if simulation, as a ratio to the import floor (a fresh interpreter importing the simulator, the spec
and validation packages, pydantic, PyYAML and rich without simulating anything), and with ``--baseline REF`` as a
ratio to the same command on the code at REF (the budget: no slowdown beyond x1.2 on its three cases against 4e7ba44).

Cases: a week of the 512-GPU example (gke-h100-512, Slurm, ~9,600 jobs from workloads/gke-h100-512.yaml), three days
of gke-kueue (Kueue, autoscaled spot pool), and the 14-day Alibaba openb window on the Kueue replay stack (when
../shared/traces is present). Each case runs ``python -m whatif ... --format json`` in a fresh interpreter, like a
user typing it. One unmeasured warm-up round, then ``--runs`` rounds, each running the floor and every case once in
turn (``timing.measure_interleaved``: a load change hits all of them alike); medians of wall clock and CPU time (user
+ system; the steadier one on a shared machine). Only ratios within one run mean anything; no test asserts a time.

Bytecode: by default as on a user's machine, whose second run reads ``__pycache__`` (``timing.cached_bytecode_env``;
the warm-up round writes it). ``--no-bytecode-cache`` is CI's and this sandbox's mode (``PYTHONDONTWRITEBYTECODE=1``,
the trees' ``__pycache__`` removed first): every run compiles every project module from source.

``--baseline REF`` checks REF out in a temporary detached git worktree next to the repository
(``bench/baseline.py``: ``<parent>/<name>-baseline-<short sha>``, so ``../shared`` resolves alike) and runs the floor
and each case there too, right after the same command on this tree in every round, with the same interpreter
(``sys.executable``) and ``cwd`` = that tree: ``python -m`` puts the working directory first on ``sys.path``, so the
run imports the baseline's packages (a probe run checks that ``whatif`` and ``validation`` load from the baseline tree
before anything is timed). A case whose files the baseline lacks is skipped with the reason. Printed: the ratio of
the CPU medians and the median of the per-round ratios (steadier when the load changes during the run). The
worktree is removed afterwards, also on an error or Ctrl-C.

    .venv/bin/python bench/whatif_bench.py [--runs 3] [--baseline REF] [--no-bytecode-cache]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.baseline import BaselineError, baseline_tree, check_imports_from  # noqa: E402
from bench.timing import Measured, cached_bytecode_env, measure_interleaved, uncached_bytecode_env  # noqa: E402

CASES = [
    ("gke-h100-512 week (Slurm)", ["--stack", "gke-h100-512", "--workload", "workloads/gke-h100-512.yaml"]),
    ("gke-kueue 3 days (Kueue)", ["--stack", "gke-kueue", "--workload", "workloads/gke-kueue.yaml"]),
    (
        "Alibaba openb 14 days (Kueue)",
        [
            "--stack-file",
            "workloads/stacks/Pulumi.alibaba-replay-kueue.yaml",
            "--workload",
            "workloads/alibaba-openb.yaml",
        ],
    ),
]
FLOOR_MODULES = ["whatif.run", "whatif.report.text", "whatif.workload.profile"]
FLOOR = "import " + ", ".join(FLOOR_MODULES)
FLOOR_NAME = "import floor"
STARTED = time.monotonic()


def command(cli: list[str] | None) -> list[str]:
    """The floor (``None``) or the what-if CLI on a case."""
    return [sys.executable, "-c", FLOOR] if cli is None else [sys.executable, "-m", "whatif", *cli, "--format", "json"]


def needed_files(cli: list[str] | None) -> list[str]:
    """The files a run reads from its tree: the floor's modules, a case's stack and workload files."""
    if cli is None:
        return [m.replace(".", "/") + ".py" for m in FLOOR_MODULES]
    flags = dict(zip(cli[::2], cli[1::2]))
    stack = [f"Pulumi.{flags['--stack']}.yaml"] if "--stack" in flags else [flags["--stack-file"]]
    return stack + [flags["--workload"]]


def missing_in(tree: Path, cli: list[str] | None) -> list[str]:
    return [
        f
        for f in needed_files(cli)
        if not (tree / f).exists() and not (f.endswith(".py") and (tree / f[:-3] / "__init__.py").exists())
    ]


def jobs_of(args: list[str]) -> int:
    from whatif.run import run_whatif

    stack: str | Path = args[1] if args[0] == "--stack" else ROOT / args[1]
    return run_whatif(stack, ROOT / args[3]).report["workload"]["jobs"]


def say(line: str) -> None:
    """A progress line on stderr (a run takes minutes)."""
    print(f"[{time.monotonic() - STARTED:4.0f} s] {line}", file=sys.stderr, flush=True)


def measure_all(
    cases: list[tuple[str, list[str] | None]], trees: dict[str, Path], runs: int, env: dict[str, str]
) -> dict[tuple[str, str], Measured]:
    """Every ``(side, case)`` a tree has the files for, interleaved round by round; ``side`` is a key of ``trees``."""
    runs_of: list[tuple[str, str, Path]] = []
    for name, cli in cases:  # a case's runs on both trees next to each other in every round
        for side, tree in trees.items():
            if missing := missing_in(tree, cli):
                print(f"skipped on {side}: {name}: {', '.join(missing)} not in {tree}", file=sys.stderr)
            else:
                runs_of.append((side, name, tree))
    clis = dict(cases)
    say(f"{len(runs_of)} commands x ({runs} rounds + 1 warm-up)")
    measured = measure_interleaved(
        [(command(clis[name]), (0,)) for _, name, _ in runs_of],
        ROOT,
        runs,
        warm_up=True,
        env=env,
        cwds=[tree for _, _, tree in runs_of],
        progress=say,
    )
    return {(side, name): m for (side, name, _), m in zip(runs_of, measured)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", metavar="REF", help="also time the code at this git commit, branch or tag")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="compile every project module on every run (CI's and this sandbox's mode)",
    )
    args = parser.parse_args()
    cases = [(n, cli) for n, cli in CASES if "alibaba" not in cli[1] or (ROOT.parent / "shared" / "traces").exists()]
    mode = "no bytecode cache" if args.no_bytecode_cache else "bytecode cache"
    load_before = os.getloadavg()
    try:
        with baseline_tree(ROOT, args.baseline) if args.baseline else nullcontext() as baseline:
            trees = {"now": ROOT} | ({"baseline": baseline[0]} if baseline else {})
            env = uncached_bytecode_env(*trees.values()) if args.no_bytecode_cache else cached_bytecode_env()
            if baseline:
                found = check_imports_from(baseline[0], ["whatif", "validation"], env)
                say(f"baseline {args.baseline} ({baseline[1][:7]}) in {baseline[0]}; a run there imports {found[0]}")
            got = measure_all([(FLOOR_NAME, None), *cases], trees, args.runs, env)
    except BaselineError as e:
        print(e, file=sys.stderr)
        raise SystemExit(2)
    load_after = os.getloadavg()

    floor = got["now", FLOOR_NAME]
    rows = []
    for name, cli in cases:
        m = got["now", name]
        rows.append(
            {
                "case": name,
                "jobs": jobs_of(cli),
                "seconds": round(m.wall_s, 3),
                "floor_s": round(floor.wall_s, 3),
                "ratio": round(m.wall_s / floor.wall_s, 2),
                "simulation_s": round(m.wall_s - floor.wall_s, 3),
                "cpu_s": round(m.cpu_s, 3),
                "floor_cpu_s": round(floor.cpu_s, 3),
                "cpu_ratio": round(m.cpu_s / floor.cpu_s, 2),
            }
        )
    print(
        f"{'case':<32}{'jobs':>7}{'s':>9}{'floor s':>9}{'ratio':>8}{'sim s':>8}{'cpu s':>8}{'cpu ratio':>10}"
        f"   (median of {args.runs}, {mode})"
    )
    for r in rows:
        print(
            f"{r['case']:<32}{r['jobs']:>7}{r['seconds']:>9.2f}{r['floor_s']:>9.2f}{r['ratio']:>8.2f}"
            f"{r['simulation_s']:>8.2f}{r['cpu_s']:>8.2f}{r['cpu_ratio']:>10.2f}"
        )
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "runs": args.runs,
        "mode": mode,
        "load_average": {"start": load_before, "end": load_after},
        "cases": rows,
    }
    if baseline:
        names = [FLOOR_NAME] + [n for n, _ in cases]
        result["baseline"] = compare(args.baseline, baseline[1], got, names, args.runs, mode)
    print(f"load average: {load_before[0]:.1f} at start, {load_after[0]:.1f} at end")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "whatif.json").write_text(json.dumps(result, indent=2) + "\n")


def compare(
    ref: str, commit: str, got: dict[tuple[str, str], Measured], names: list[str], runs: int, mode: str
) -> dict:
    """The table now / baseline (CPU), printed; what the JSON keeps of it."""
    label = ref if ref == commit[: len(ref)] else f"{ref} = {commit[:7]}"
    print(
        f"\n{'case':<32}{'baseline CPU s':>15}{'now CPU s':>11}{'now/baseline':>14}{'per round':>11}"
        f"   ({label}; median of {runs}, interleaved, {mode})"
    )
    rows = []
    for name in names:
        if ("baseline", name) not in got:
            print(f"{name:<32}{'skipped':>15}")
            continue
        old, new = got["baseline", name], got["now", name]
        per_round = statistics.median(n / o for n, o in zip(new.cpu_samples_s, old.cpu_samples_s))
        rows.append(
            {
                "case": name,
                "baseline": old.__dict__,
                "now": new.__dict__,
                "cpu_ratio": round(new.cpu_s / old.cpu_s, 2),
                "cpu_ratio_per_round": round(per_round, 2),
                "wall_ratio": round(new.wall_s / old.wall_s, 2),
            }
        )
        print(f"{name:<32}{old.cpu_s:>15.2f}{new.cpu_s:>11.2f}{rows[-1]['cpu_ratio']:>14.2f}{per_round:>11.2f}")
    print("(now/baseline: ratio of the medians; per round: median of each round's ratio)")
    return {"ref": ref, "commit": commit, "cases": rows}


if __name__ == "__main__":
    main()
