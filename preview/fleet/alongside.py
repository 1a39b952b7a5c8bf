"""``python -m preview --stack X --with Y,Z``: the stacks of this Pulumi project deployed alongside X, read from their
stack files next to the program and planned (never run), so that what only shows across stacks is checked before
anything is created: two gpu-cluster Cloud NATs over all subnetworks of one project, region and network
(``stacks/validate/fleet_nat.py``; GCP allows one, the second ``pulumi up`` fails)."""

from __future__ import annotations

from typing import Any, Sequence

from catalog import Catalog
from preview.fleet.stack_files import StackFiles, file_name
from stacks.plan.fleet_egress import nat_scope
from stacks.validate.fleet_nat import alongside_nat_issues
from stacks.validate.issues import SpecError, SpecIssue
from stacks.validate.load import decode_config
from stacks.validate.planned import load_planned
from stacks.validate.stack_file import StackFileError

WITH = "--with"


def alongside_issues(
    stack: str, scope: dict[str, Any] | None, alongside: Sequence[str], files: StackFiles, cat: Catalog
) -> list[SpecIssue]:
    """Exit-2 errors: a listed stack that has no valid stack file, or a Cloud NAT scope two of the stacks share."""
    errors: list[SpecIssue] = []
    scopes: list[tuple[str, dict[str, Any] | None]] = []
    for name in dict.fromkeys(alongside):
        if name == stack:
            continue
        config = files.read(name)
        if config is None:
            errors.append(
                SpecIssue(
                    WITH,
                    f"no stack file {file_name(name)} in {files.where}",
                    name,
                    fix=f"{files.how_to_add(name)}, or correct the name in {WITH}",
                )
            )
            continue
        if isinstance(config, StackFileError):
            errors.append(config.issue)
            continue
        try:
            planned = load_planned(decode_config(config), cat, stack_name=name)
        except SpecError as exc:
            first = exc.errors[0]
            errors.append(
                SpecIssue(
                    WITH,
                    f"stack {name} is invalid ({len(exc.errors)} error(s); first: {first.path}: {first.problem})",
                    name,
                    fix=f"python -m preview --stack {name}, and fix what it reports",
                )
            )
            continue
        scopes.append((name, nat_scope(planned.spec.cloud.value, planned.plan.cluster)))
    return errors or alongside_nat_issues(stack, scope, scopes)
