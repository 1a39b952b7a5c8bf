"""``python -m preview --stack NAME --base GIT_REF | --base-file FILE``: the diff mode of the preview command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from preview.render.json_text import strict_dumps
from preview.report import EXIT_INVALID

if TYPE_CHECKING:
    from preview.policy.check import PolicyOptions


def add_diff_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--base", metavar="GIT_REF", help="diff against the stack file at this git ref (git show REF:Pulumi.NAME.yaml)"
    )
    group.add_argument("--base-file", type=Path, metavar="FILE", help="diff against this stack file")
    parser.add_argument(
        "--fail-on-cost-increase",
        metavar="THRESHOLD",
        help="with --base/--base-file: exit 3 when $/hour at max grows by more than THRESHOLD "
        "(dollars, e.g. 250, or a percentage of the base, e.g. 10%%)",
    )


def wants_diff(args: argparse.Namespace) -> bool:
    return bool(args.base or args.base_file)


def policy_options(args: argparse.Namespace) -> PolicyOptions:
    """The policy pack flags of the preview command."""
    from preview.policy.check import PolicyOptions

    return PolicyOptions(
        enabled=not getattr(args, "no_policies", False),
        pack_dir=getattr(args, "policy_pack", None),
        config_file=getattr(args, "policy_pack_config", None),
        subprocess=getattr(args, "policy_pack_subprocess", False),
    )


def run_diff(args: argparse.Namespace, head_path: Path) -> int:
    from preview.diff.compare import CostThreshold, default_previewer, diff_configs, exit_code
    from preview.diff.sources import BaseSourceError, base_from_file, base_from_git, head_config
    from preview.fleet.stack_files import FolderStackFiles

    try:
        threshold = CostThreshold.parse(args.fail_on_cost_increase) if args.fail_on_cost_increase else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if args.format not in ("text", "json", "markdown"):
        print(
            f"error: --format {args.format} is not available with --base; use text, json or markdown", file=sys.stderr
        )
        return EXIT_INVALID
    try:
        base = base_from_git(head_path, args.base) if args.base else base_from_file(args.base_file)
    except BaseSourceError as exc:
        print(exc, file=sys.stderr)
        return EXIT_INVALID
    head = head_config(head_path)
    if base.config is None and head is None:
        print(
            f"error: {head_path.name} exists neither in the working tree nor at {base.label}\n"
            f"  fix: check the stack name (--stack) or the ref",
            file=sys.stderr,
        )
        return EXIT_INVALID
    diff = diff_configs(
        args.stack,
        base.config,
        head,
        base.label,
        previewer=default_previewer(policy_options(args)),
        base_files=base.stack_files,
        head_files=FolderStackFiles(head_path.parent),
    )
    code = exit_code(diff, threshold)
    if args.format == "json":
        doc = diff.as_dict()
        doc["exitCode"] = code
        if threshold is not None:
            doc["costThreshold"] = {"limit": threshold.describe(), "exceeded": threshold.exceeded_by(diff.cost)}
        print(strict_dumps(doc, indent=2))
    elif args.format == "markdown":
        from preview.diff.render_markdown import render_diff_markdown

        print(render_diff_markdown(diff), end="")
    else:
        from preview.diff.render_text import render_diff_text

        print(render_diff_text(diff), end="")
    if threshold is not None and threshold.exceeded_by(diff.cost):
        print(
            f"cost: $/hour at max grows by {diff.cost.delta_max:,.2f}, more than --fail-on-cost-increase "
            f"{threshold.describe()}",
            file=sys.stderr,
        )
    return code
