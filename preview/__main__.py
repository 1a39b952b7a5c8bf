"""python -m preview --stack NAME [--format text|json|markdown]: the offline preview (no cloud credentials)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from preview.engine import PROJECT_ROOT, stack_file
from preview.report import EXIT_INVALID


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preview", description=__doc__)
    parser.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
    parser.add_argument("--stack-file", type=Path, help="read the stack config from this file instead")
    parser.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    parser.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    args = parser.parse_args(argv)

    path = args.stack_file or stack_file(args.stack, PROJECT_ROOT)
    if not path.exists():
        stacks = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))
        print(f"error: no stack file {path.name} in {PROJECT_ROOT}\n  allowed:  {', '.join(stacks)}\n"
              f"  fix:      pass --stack with one of the allowed names, or create {path.name}", file=sys.stderr)
        return EXIT_INVALID

    from preview.run import preview_file  # after arg parsing: --help stays fast

    report = preview_file(args.stack, path)
    if args.format == "json":
        print(json.dumps(report.as_dict(), indent=2, sort_keys=False, default=str))
    elif args.format == "markdown":
        from preview.render_markdown import render_markdown
        print(render_markdown(report), end="")
    else:
        from preview.render_text import render_text
        color = {"auto": None, "always": True, "never": False}[args.color]
        print(render_text(report, color=color), end="")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
