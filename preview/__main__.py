"""python -m preview --stack NAME [--format text|json|markdown|sarif] [--policy-pack-config FILE]: the offline preview
(no cloud credentials), with the policy pack run as `pulumi preview --policy-pack policies` runs it.
With --base GIT_REF or --base-file FILE: the diff of the stack against that version (see preview/diff/compare.py).
python -m preview job-objects --stack NAME --job JOB [--pool POOL] [--queue QUEUE] [--nodes N]: one TrainJob's own
NVLink domain on a GB200 pool, as YAML (see preview/jobs/cli.py)."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from preview.render.crash import run_guarded
from stacks.validate.environment import require_environment

if TYPE_CHECKING:
    from preview.report import PreviewReport


def main(argv: Sequence[str] | None = None) -> int:
    """The command; an unexpected exception exits EXIT_INTERNAL (4) with one line, never as 0, 1 or 2."""
    require_environment("preview", "--stack dev")  # before any import that needs the dependencies
    return run_guarded(_main, argv, "python -m preview")


def _main(argv: Sequence[str] | None) -> int:
    if argv and argv[0] == "job-objects":  # python -m preview job-objects ...: one TrainJob's own NVLink domain
        from preview.jobs.cli import run as job_objects

        return job_objects(argv[1:])
    from preview.diff.cli import add_diff_arguments, policy_options, run_diff, wants_diff
    from preview.engine import PROJECT_ROOT, stack_file
    from preview.report import EXIT_INVALID

    parser = argparse.ArgumentParser(prog="python -m preview", description=__doc__)
    parser.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
    parser.add_argument(
        "--stack-file",
        type=Path,
        help="read the stack config from this file instead (a fleet manager's workers, and --with stacks, from "
        "Pulumi.<stack>.yaml next to it)",
    )
    parser.add_argument("--format", choices=["text", "json", "markdown", "sarif"], default="text")
    parser.add_argument("--policy-pack", type=Path, help="policy pack directory (default: policies/)")
    parser.add_argument(
        "--policy-pack-config",
        type=Path,
        metavar="FILE",
        help="policy pack config JSON, as for pulumi preview --policy-pack-config",
    )
    parser.add_argument(
        "--policy-pack-subprocess",
        action="store_true",
        help="boot the pack as the Pulumi CLI does (own interpreter, gRPC); default: the same pack "
        "in this process, same findings, faster",
    )
    parser.add_argument("--no-policies", action="store_true", help="skip the policy pack")
    parser.add_argument(
        "--with",
        dest="alongside",
        action="append",
        default=[],
        metavar="STACK[,STACK...]",
        help="stacks of this project deployed alongside (their Pulumi.<stack>.yaml next to the "
        "program): two gpu-cluster Cloud NATs on one project, region and network are refused",
    )
    parser.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    parser.add_argument("--debug", action="store_true", help="on an internal error (exit 4), print the traceback")
    add_diff_arguments(parser)
    args = parser.parse_args(argv)
    from stacks.validate.environment import stack_name_problem

    problem = stack_name_problem("--stack", args.stack) if args.stack_file is None else None
    if problem is None and args.policy_pack is not None and not (args.policy_pack / "PulumiPolicy.yaml").is_file():
        problem = (
            f"error: --policy-pack {args.policy_pack}: no PulumiPolicy.yaml there (from {Path.cwd()})\n"
            f"  fix:      --policy-pack policies (the pack of this project; a path is relative to the "
            f"current folder)"
        )
    if problem is None and args.fail_on_cost_increase and not wants_diff(args):
        problem = (
            f"error: --fail-on-cost-increase {args.fail_on_cost_increase} needs a diff to compare against\n"
            f"  fix:      add --base GIT_REF (e.g. --base origin/main) or --base-file OLD/Pulumi."
            f"{args.stack}.yaml"
        )
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_INVALID

    path = args.stack_file or stack_file(args.stack, PROJECT_ROOT)
    if wants_diff(args):  # before the existence check: a stack deleted in the working tree still has a diff
        return run_diff(args, path)
    if args.stack_file is None and not path.exists():  # a --stack-file the reader reports itself
        stacks = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))
        print(
            f"error: no stack file {path.name} in {PROJECT_ROOT}\n  allowed:  {', '.join(stacks)}\n"
            f"  fix:      pass --stack with one of the allowed names, or create {path.name}",
            file=sys.stderr,
        )
        return EXIT_INVALID

    from preview.run import preview_file  # after arg parsing: --help stays fast

    alongside = [name.strip() for names in args.alongside for name in names.split(",") if name.strip()]
    report = preview_file(args.stack, path, policies=policy_options(args), alongside=alongside)
    print(render_report(report, args.format, {"auto": None, "always": True, "never": False}[args.color]), end="")
    return report.exit_code


def render_report(report: "PreviewReport", fmt: str, color: bool | None = None) -> str:
    """The report in one output format, exactly as the command prints it (JSON and SARIF are strict JSON)."""
    if fmt == "sarif":
        from preview.render.sarif import render_sarif_text

        return render_sarif_text(report)
    if fmt == "json":
        from preview.render.json_text import strict_dumps

        return strict_dumps(report.as_dict(), indent=2) + "\n"
    if fmt == "markdown":
        from preview.render.markdown import render_markdown

        return render_markdown(report)
    from preview.render.text import render_text

    return render_text(report, color=color)


if __name__ == "__main__":
    # A command that exits when done: its objects (imported provider modules, spec models, every registration) live
    # to the end, and the cyclic collector would rescan them each time enough new objects pile up (~20 % of a small
    # stack's preview CPU, docs/benchmarks.md). Reference counting still frees everything acyclic; the few cycles
    # wait for the exit. Only the command: code calling main() (tests, the diff) keeps its collector.
    gc.disable()
    try:
        sys.exit(main())
    except BrokenPipeError:  # `... | head`: the reader left; exit quietly like other CLI tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
