"""One pull-request comment with the offline diff of every stack file that changed against a base ref.

    python -m preview.diff.comment --base REF [--base-label NAME] [--output FILE] [--fail-on-cost-increase X]

CI runs this on pull requests (``.github/workflows/stack-diff.yml``) and posts the output as one comment, which it
finds again by ``COMMENT_MARKER`` to update it on the next push. Exit code: the worst of the stacks' (2 invalid,
1 mandatory violation, 3 cost increase over the threshold, 0).
"""

from __future__ import annotations

if __name__ == "__main__":  # before any import that needs the dependencies: a bare python gets the fix, exit 2
    from catalog.environment import require_environment

    require_environment("preview.diff.comment", "--base origin/main")

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from preview.engine import PROJECT_ROOT

COMMENT_MARKER = "<!-- gpu-cluster-diff -->"
NO_CHANGE_MARKER = "<!-- gpu-cluster-diff:none -->"
"""Marks a comment body that reports no changed stack file: CI updates an older comment with it but never posts it
as a new one (a pull request that never touched a stack gets no comment)."""
STACK_FILE = re.compile(r"^Pulumi\.(?P<stack>[^/]+)\.yaml$")
EXIT_PRIORITY = [2, 1, 3, 0]
"""Worst first: invalid config, mandatory violation, cost over the threshold, fine."""


def changed_stacks(root: Path, ref: str) -> list[str]:
    """Stacks whose ``Pulumi.<stack>.yaml`` (in ``root``) differs between ``ref`` and the working tree, deleted ones
    included. Raises BaseSourceError for an unknown ref."""
    from preview.diff.sources import BaseSourceError

    done = subprocess.run(
        ["git", "diff", "--name-only", "--relative", "--no-renames", ref, "--", "."],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise BaseSourceError(
            f"error: git diff against {ref!r} failed in {root}: {done.stderr.strip()}\n"
            f"  fix: fetch the base first (in GitHub Actions: actions/checkout with fetch-depth: 0)"
        )
    untracked = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "--", "."],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )  # new stack files not yet committed
    lines = done.stdout.splitlines() + (untracked.stdout.splitlines() if untracked.returncode == 0 else [])
    names = [STACK_FILE.match(line.strip()) for line in lines]
    return sorted({m.group("stack") for m in names if m})


def fleet_managers(root: Path, changed: list[str]) -> list[str]:
    """Fleet managers in ``root`` whose stack file did not change but that list a worker whose file did: their fleet
    totals change with it, so the comment diffs them too (each side reads the workers at its own revision)."""
    from preview.engine import fleet_workers
    from stacks.validate.stack_file import StackFileError, read_stack_file

    out = []
    for path in sorted(root.glob("Pulumi.*.yaml")):
        match = STACK_FILE.match(path.name)
        if match is None or match.group("stack") in changed:
            continue
        try:
            config = read_stack_file(path)
        except StackFileError:
            continue  # an unchanged broken file is not this pull request's news
        if any(ref.rsplit("/", 1)[-1] in changed for _, ref in fleet_workers(config)):
            out.append(match.group("stack"))
    return out


def compose(sections: list[str], base_label: str, managers: Sequence[str] = ()) -> str:
    """``managers``: the fleet managers among the sections that are there only because a worker changed."""
    head = [COMMENT_MARKER, "## gpu-cluster: offline stack diff", ""]
    if not sections:
        return "\n".join(
            [
                COMMENT_MARKER,
                NO_CHANGE_MARKER,
                "## gpu-cluster: offline stack diff",
                "",
                f"No stack file (`Pulumi.<stack>.yaml`) changed against `{base_label}`.",
                "",
            ]
        )
    files = len(sections) - len(managers)
    also = (
        f", and {len(managers)} fleet manager{'s' if len(managers) != 1 else ''} whose workers changed "
        f"({', '.join(f'`{m}`' for m in managers)})"
        if managers
        else ""
    )
    head += [f"{files} stack file{'s' if files != 1 else ''} changed against `{base_label}`{also}.", ""]
    return "\n".join(head) + "\n" + "\n".join(sections)


def worst(codes: list[int]) -> int:
    return min(codes, key=EXIT_PRIORITY.index) if codes else 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command; an unexpected exception exits EXIT_INTERNAL (4) with one line (preview/render/crash.py)."""
    from preview.render.crash import run_guarded

    return run_guarded(_main, argv, "python -m preview.diff.comment")


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m preview.diff.comment", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", required=True, metavar="GIT_REF", help="compare the stack files at this ref")
    parser.add_argument("--base-label", help="how to name the base in the comment (default: the ref)")
    parser.add_argument("--root", type=Path, default=PROJECT_ROOT, help="folder with the stack files")
    parser.add_argument("--output", type=Path, help="write the comment here (default: standard output)")
    parser.add_argument(
        "--fail-on-cost-increase",
        metavar="THRESHOLD",
        help="exit 3 when a stack's $/hour at max grows by more than this (250, or 10%%)",
    )
    parser.add_argument("--policy-pack-config", type=Path, metavar="FILE", help="policy pack config JSON")
    parser.add_argument("--debug", action="store_true", help="on an internal error (exit 4), print the traceback")
    args = parser.parse_args(argv)

    from preview.diff.compare import CostThreshold, default_previewer, diff_configs, exit_code
    from preview.diff.cli import policy_options
    from preview.diff.render_markdown import GITHUB_COMMENT_LIMIT, render_diff_markdown
    from preview.diff.sources import BaseSourceError, base_from_git, head_config
    from preview.fleet.stack_files import FolderStackFiles

    label = args.base_label or args.base
    try:
        threshold = CostThreshold.parse(args.fail_on_cost_increase) if args.fail_on_cost_increase else None
        stacks = changed_stacks(args.root, args.base)
        managers = fleet_managers(args.root, stacks)  # a changed worker changes its manager's fleet totals
        stacks += managers
        bases = {s: base_from_git(args.root / f"Pulumi.{s}.yaml", args.base) for s in stacks}
    except (BaseSourceError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 2
    previewer = default_previewer(policy_options(args))
    budget = (GITHUB_COMMENT_LIMIT - 500) // max(1, len(stacks))  # 500: the comment's own header
    sections, codes = [], []
    for stack in stacks:
        path = args.root / f"Pulumi.{stack}.yaml"
        head = head_config(path)
        diff = diff_configs(
            stack,
            bases[stack].config,
            head,
            label,
            previewer=previewer,
            base_files=bases[stack].stack_files,
            head_files=FolderStackFiles(args.root),
        )
        sections.append(render_diff_markdown(diff, max_chars=budget))
        codes.append(exit_code(diff, threshold))
        print(
            f"{stack}: exit {codes[-1]}, {diff.cost.delta_max:+,.2f} $/h at max, "
            f"{len(diff.policy.new)} new violation(s)",
            file=sys.stderr,
        )
    body = compose(sections, label, managers)
    if args.output:
        args.output.write_text(body, encoding="utf-8")
    else:
        print(body, end="")
    return worst(codes)


if __name__ == "__main__":
    sys.exit(main())
