"""Offline, a manager's ``pulumi.StackReference`` to ``<org>/<project>/<stack>`` is answered by previewing
``Pulumi.<stack>.yaml`` through the same engine, read where the manager's own stack file came from (the working tree,
or the diff's base ref: ``stack_files.py``); problems that make the fleet impossible (a missing stack file, a worker
that is not a worker, a worker that is itself a manager) are configuration errors (exit 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from preview.fleet.stack_files import StackFiles, file_name
from stacks.spec.fleet import Fleet
from stacks.validate.issues import SpecIssue, path_of
from stacks.validate.load import decode_config
from stacks.validate.stack_file import StackFileError


@dataclass
class Member:
    name: str
    reference: str
    stack: str
    report: Any
    """The worker's PreviewReport (resources, cost, outputs)."""


def preview_workers(
    fleet: Fleet, files: StackFiles, preview: Callable[[str, dict[str, Any]], Any]
) -> tuple[list[Member], list[SpecIssue]]:
    """``preview(stack, config)``: the preview of one stack config (``preview.run.preview_config``); ``files``: where
    the workers' stack files are read (the manager file's revision)."""
    members: list[Member] = []
    errors: list[SpecIssue] = []
    for i, worker in enumerate(fleet.workers):
        at = path_of("fleet", "workers", i, "stack")
        name = worker.stack.rsplit("/", 1)[-1]
        config = files.read(name)
        if config is None:
            errors.append(
                SpecIssue(
                    at,
                    f"worker '{worker.name}': no stack file {file_name(name)} in {files.where}; "
                    "the offline preview reads each worker's outputs from its stack file",
                    worker.stack,
                    allowed="a stack whose Pulumi.<stack>.yaml is in this repository",
                    fix=f"{files.how_to_add(name)} (the worker's stack config, `pulumi config` of "
                    f"{worker.stack}), or correct the stack name",
                )
            )
            continue
        if isinstance(config, StackFileError):
            errors.append(config.issue)
            continue
        role = _role(config)
        if role != "worker":
            problem = (
                "is itself a fleet manager: a fleet is one manager and its workers (a manager as a worker "
                "makes a cycle or a nested fleet, which MultiKueue does not support)"
                if role == "manager"
                else "does not declare gpu-cluster:fleet role worker, so it exports no kubeconfig for the manager"
            )
            errors.append(
                SpecIssue(
                    at,
                    f"worker '{worker.name}': stack {name} {problem}",
                    worker.stack,
                    allowed="a stack with fleet: {role: worker}",
                    fix=f"set gpu-cluster:fleet: {{role: worker}} in {file_name(name)}, or list another stack",
                )
            )
            continue
        report = preview(name, config)
        if report.errors:
            first = report.errors[0]
            errors.append(
                SpecIssue(
                    at,
                    f"worker '{worker.name}': stack {name} is invalid ({len(report.errors)} "
                    f"error(s); first: {first.path}: {first.problem})",
                    worker.stack,
                    fix=f"python -m preview --stack {name}, and fix what it reports",
                )
            )
            continue
        members.append(Member(worker.name, worker.stack, name, report))
    return members, errors


def _role(config: dict[str, Any]) -> str | None:
    fleet = decode_config(config).get("fleet")
    return fleet.get("role") if isinstance(fleet, dict) else None
