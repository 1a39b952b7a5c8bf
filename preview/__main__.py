"""python -m preview --stack NAME [--format text|json|markdown|sarif] [--policy-pack-config FILE]: the offline preview
(no cloud credentials), with the policy pack run as `pulumi preview --policy-pack policies` runs it.
With --base GIT_REF or --base-file FILE: the diff of the stack against that version (see preview/diff/compare.py)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from preview.diff.cli import add_diff_arguments, policy_options, run_diff, wants_diff
from preview.engine import PROJECT_ROOT, stack_file
from preview.report import EXIT_INVALID


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preview", description=__doc__)
    parser.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
    parser.add_argument("--stack-file", type=Path, help="read the stack config from this file instead")
    parser.add_argument("--format", choices=["text", "json", "markdown", "sarif"], default="text")
    parser.add_argument("--policy-pack", type=Path, help="policy pack directory (default: policies/)")
    parser.add_argument("--policy-pack-config", type=Path, metavar="FILE",
                        help="policy pack config JSON, as for pulumi preview --policy-pack-config")
    parser.add_argument("--no-policies", action="store_true", help="skip the policy pack")
    parser.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    add_diff_arguments(parser)
    args = parser.parse_args(argv)

    path = args.stack_file or stack_file(args.stack, PROJECT_ROOT)
    if wants_diff(args):  # before the existence check: a stack deleted in the working tree still has a diff
        return run_diff(args, path)
    if not path.exists():
        stacks = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))
        print(f"error: no stack file {path.name} in {PROJECT_ROOT}\n  allowed:  {', '.join(stacks)}\n"
              f"  fix:      pass --stack with one of the allowed names, or create {path.name}", file=sys.stderr)
        return EXIT_INVALID

    from preview.run import preview_file  # after arg parsing: --help stays fast

    report = preview_file(args.stack, path, policies=policy_options(args))
    if args.format == "sarif":
        from preview.render.sarif import render_sarif_text
        print(render_sarif_text(report), end="")
    elif args.format == "json":
        print(json.dumps(report.as_dict(), indent=2, sort_keys=False, default=str))
    elif args.format == "markdown":
        from preview.render.markdown import render_markdown
        print(render_markdown(report), end="")
    else:
        from preview.render.text import render_text
        color = {"auto": None, "always": True, "never": False}[args.color]
        print(render_text(report, color=color), end="")
    return report.exit_code


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `... | head`: the reader left; exit quietly like other CLI tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
