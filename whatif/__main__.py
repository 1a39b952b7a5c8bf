"""python -m whatif --stack NAME --workload FILE [--format text|json|markdown] [--seed N] [--chart out.png]
[--vs STACK]: simulate the stack's scheduler (Kueue or Slurm, as rendered) on a workload and report utilization,
queue waits and the effective $ per used GPU-hour. Exit 0: done; 2: the stack or the workload file is invalid; 4: an internal error (a bug)."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

EXIT_INVALID = 2
EXIT_INTERNAL = 4


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m whatif", description=__doc__)
    p.add_argument("--stack", help="stack name: reads Pulumi.<stack>.yaml")
    p.add_argument("--stack-file", type=Path, help="read the stack from this file instead")
    p.add_argument("--workload", type=Path, required=True, help="workload file (kind: profile, jobs or trace)")
    p.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    p.add_argument("--seed", type=int, default=0, help="random seed (profiles, spot interruptions); default 0")
    p.add_argument("--chart", type=Path, metavar="PNG", help="also write the chart here")
    p.add_argument("--vs", metavar="STACK", help="run the same workload on this stack too and show the differences")
    p.add_argument("--vs-stack-file", type=Path, help="the --vs stack from a file")
    p.add_argument(
        "--scheduler",
        choices=["auto", "slurm", "kueue"],
        default="auto",
        help="auto (default): the stack's scheduling.workload",
    )
    p.add_argument(
        "--nodes-up",
        choices=["min", "max"],
        default="min",
        help="nodes at the start: min (autoscaled pools and Slurm pools that follow the queue, default) "
        "or max (every node up, no scaling)",
    )
    p.add_argument(
        "--spot-interruptions-per-node-month",
        type=float,
        metavar="RATE",
        help="reclaims per spot node and 30 days (default: the catalog's rate; 0 turns them off)",
    )
    p.add_argument("--no-backfill", action="store_true", help="Slurm: main scheduler only (an experiment)")
    p.add_argument("--horizon-hours", type=float, help="stop the simulation here")
    p.add_argument(
        "--assume",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a start-path factor of catalog/data/start-path.csv (e.g. image_gb=30); repeatable",
    )
    p.add_argument(
        "--policy-pack-config",
        type=Path,
        metavar="FILE",
        help="price pools at the negotiated prices of this policy pack config's priceOverrides, as the "
        "preview's cost table does",
    )
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    p.add_argument("--debug", action="store_true", help="on an internal error, print the traceback too")
    args = p.parse_args(argv)
    if not args.stack and not args.stack_file:
        p.error("pass --stack NAME or --stack-file FILE")
    return args


def _stack(name: str | None, file: Path | None) -> str | Path:
    from whatif.stack import stack_path

    if file is not None:
        return file
    assert name is not None
    return name if stack_path(name).exists() else stack_path(name)


def _stack_exists(name: str) -> bool:
    from whatif.stack import stack_path

    return stack_path(name).exists()


def _worker_stack(manager: str, worker: str) -> str | None:
    """The stack of the fleet worker named ``worker`` in the manager stack ``manager`` (None: not a fleet worker)."""
    from whatif.stack import load_stack_spec

    if not _stack_exists(manager):
        return None
    spec = load_stack_spec(manager)
    workers = spec.fleet.workers if spec.fleet is not None else []
    return next((w.stack.rsplit("/", 1)[-1] for w in workers if w.name == worker), None)


def _assumptions(items: list[str]) -> tuple[dict[str, float], list[str]]:
    """--assume NAME=VALUE pairs -> overrides, and every problem at once."""
    from catalog.start_path import load_start_path

    known = load_start_path()
    out, bad = {}, []
    for item in items:
        name, _, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if name not in known or number < 0:
            bad.append(
                f"error: --assume {item!r}: expected NAME=VALUE with a known factor and a number >= 0\n"
                f"  allowed:  {', '.join(sorted(known))}\n  fix:      e.g. --assume image_gb=30"
            )
        else:
            out[name] = number
    return out, bad


def _price_overrides(path: Path | None) -> tuple[list[dict], str | None]:
    """The priceOverrides of ``--policy-pack-config`` (the file ``python -m preview`` takes), or a refusal."""
    if path is None:
        return [], None
    import json
    from stacks.plan.billing import pack_config_overrides

    try:
        return pack_config_overrides(json.loads(path.read_text(encoding="utf-8"))), None
    except (OSError, ValueError) as exc:
        return [], (
            f"error: --policy-pack-config {path}: not a readable JSON file ({exc})\n"
            "  fix:      pass the JSON file given to `python -m preview --policy-pack-config`"
        )


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    from stacks.validate.issues import SpecError, format_issues
    from whatif.model import SimOptions
    from whatif.progress import LazyProgress
    from whatif.run import chart, run_whatif
    from whatif.workload.load import WorkloadError

    assume, bad = _assumptions(args.assume)
    if bad:
        print("\n".join(bad), file=sys.stderr)
        return EXIT_INVALID
    overrides, bad_config = _price_overrides(args.policy_pack_config)
    if bad_config:
        print(bad_config, file=sys.stderr)
        return EXIT_INVALID
    bar = LazyProgress("simulating")
    opts = SimOptions(
        price_overrides=tuple(overrides),
        assume=assume,
        nodes_up=args.nodes_up,
        scheduler=args.scheduler,
        backfill=not args.no_backfill,
        spot_interruptions_per_node_month=args.spot_interruptions_per_node_month,
        horizon_s=args.horizon_hours * 3600 if args.horizon_hours else None,
        progress=bar,
    )
    from stacks.validate.environment import stack_name_problem

    problems = [
        p
        for p in (
            stack_name_problem("--stack", args.stack) if args.stack and not args.stack_file else None,
            stack_name_problem("--vs", args.vs) if args.vs and not args.vs_stack_file else None,
        )
        if p
    ]
    if args.chart and not args.chart.parent.is_dir():
        problems.append(
            f"error: --chart {args.chart}: no folder {args.chart.parent} to write it in\n"
            f"  fix:      mkdir -p {args.chart.parent}, or pass a path in an existing folder"
        )
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return EXIT_INVALID
    try:
        if not args.workload.exists() and not args.workload.is_absolute():
            # as --stack, a project path (workloads/x.yaml) works from any folder: the project's file when none is here
            from whatif.stack import PROJECT_ROOT

            if (PROJECT_ROOT / args.workload).exists():
                args.workload = PROJECT_ROOT / args.workload
        if args.vs and args.stack and not _stack_exists(args.vs):  # --vs <worker name> of a fleet manager
            args.vs = _worker_stack(args.stack, args.vs) or args.vs
        for name, file in ((args.stack, args.stack_file), (args.vs, args.vs_stack_file)):
            target = _stack(name, file) if (name or file) else None
            if isinstance(target, Path) and not target.exists():
                print(
                    f"error: no stack file {target}\n  fix:      pass --stack with an existing stack name "
                    "(Pulumi.<name>.yaml in the project root) or --stack-file",
                    file=sys.stderr,
                )
                return EXIT_INVALID
        if (args.vs or args.vs_stack_file) and (refusal := vs_refusal(args, opts)):
            print(refusal, file=sys.stderr)
            return EXIT_INVALID
        run = run_whatif(_stack(args.stack, args.stack_file), args.workload, args.seed, opts, args.stack)
        if args.vs or args.vs_stack_file:
            from whatif.compare import compare

            other = run_whatif(_stack(args.vs, args.vs_stack_file), args.workload, args.seed, opts, args.vs)
            run.report["compare"] = compare(run.report, other.report)
            vs = args.vs or args.vs_stack_file
            run.report["warnings"] = [*run.report["warnings"], *(f"--vs {vs}: {w}" for w in other.report["warnings"])]
    except SpecError as exc:
        print(format_issues(exc.issues), file=sys.stderr)
        return EXIT_INVALID
    except WorkloadError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INVALID
    finally:
        bar.close()
    if args.chart:
        chart(run, args.chart)
    if args.format == "json":
        print(json.dumps(run.report, indent=2, allow_nan=False))
    elif args.format == "markdown":
        from whatif.report.markdown import render_markdown

        print(render_markdown(run.report, str(args.chart) if args.chart else None), end="")
    else:
        from whatif.report.text import render_text

        color = {"auto": sys.stdout.isatty(), "always": True, "never": False}[args.color]
        print(render_text(run.report, color=color), end="")
    return 0


def vs_refusal(args: argparse.Namespace, opts: Any) -> str | None:
    """Before any simulation: the workload must name only queues and priority classes the --vs stack has too (the
    comparison is per queue), else the reason and the fix, followed by each name that does not exist there."""
    from whatif.api import cluster_of, load_stack_spec
    from whatif.workload.load import WorkloadError, load_workload

    target = _stack(args.vs, args.vs_stack_file)
    label = args.vs or Path(target).stem.removeprefix("Pulumi.")
    try:
        load_workload(args.workload, cluster_of(load_stack_spec(target), label, opts), args.seed)
    except WorkloadError as exc:
        return (
            f"error: --vs {label}: the workload {args.workload} names queues or priority classes that {label} "
            f"does not have ({len(exc.issues)} below); --vs runs the SAME workload on both stacks and compares "
            f"them per queue, so both need the workload's names\n"
            f"  fix:      compare with a stack that has them (e.g. an edited copy: --vs-stack-file FILE), or run "
            f"each stack on its own workload (--stack {label} --workload workloads/{label}.yaml)\n{exc}"
        )
    return None


def guarded_main(argv: list[str] | None = None) -> int:
    """``main``, with an unexpected exception reported as a bug: one line, exit EXIT_INTERNAL (the preview's exit-code
    contract, README "Exit codes"), the traceback only with ``--debug``."""
    from stacks.validate.environment import require_environment

    require_environment(
        "whatif", "--stack gke-kueue --workload workloads/gke-kueue.yaml", ("yaml", "ruamel.yaml", "pydantic", "rich")
    )
    args = sys.argv[1:] if argv is None else argv
    try:
        return main(argv)
    except (KeyboardInterrupt, BrokenPipeError, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - the one place every unexpected error ends
        if "--debug" in args:
            traceback.print_exc(file=sys.stderr)
        what = (f"{type(exc).__name__}: {exc}".splitlines() or [type(exc).__name__])[0][:160]
        print(
            f"internal error (a bug in gpu-cluster, not in your stack or workload): {what}; please report it with "
            f"the output of `python -m whatif ... --debug` (exit {EXIT_INTERNAL})",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    # A command that exits when done (as `python -m preview`): what it builds (spec models, the cluster model, every
    # job's state) lives to the end, and the cyclic collector would rescan it each time enough new objects pile up:
    # 8 % of a week of gke-h100-512's CPU, same peak memory (docs/benchmarks.md). Reference counting still frees
    # everything acyclic. Only the command: code calling main() (tests, --vs inside one run) keeps its collector.
    gc.disable()
    try:
        sys.exit(guarded_main())
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
