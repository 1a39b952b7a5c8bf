"""Where the base side of a diff comes from: a stack file at a git ref (``git show REF:path``) or another file.

Only stack files are read at the base (the stack's own and, for a fleet manager, its workers' at the same revision);
the program (``__main__.py``, components, policies) is the working tree's, so the diff compares configurations, not
code.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from preview.fleet.stack_files import FolderStackFiles, GitStackFiles, StackConfig, StackFiles
from stacks.validate.stack_file import StackFileError, parse_stack_bytes, read_stack_file


class BaseSourceError(Exception):
    """The base could not be read; the message says what, and how to fix it."""


@dataclass(frozen=True)
class BaseConfig:
    label: str
    """How the base is named in the output: ``origin/main`` or a file path."""
    config: StackConfig
    """The ``config:`` map of the stack file at the base; None when the stack did not exist there (a new stack); a
    ``StackFileError`` when the file is there but is no stack file (that side is shown as invalid)."""
    stack_files: StackFiles | None = field(default=None, compare=False)
    """Where a fleet manager's worker stack files are read on this side: at the same ref, or next to the base
    file. None: next to the program (the working tree)."""


__all__ = ["BaseConfig", "BaseSourceError", "StackConfig", "base_from_file", "base_from_git", "head_config"]


def head_config(path: Path) -> StackConfig:
    """The working tree's stack file through the one reader; None when there is none (a deleted stack)."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        return read_stack_file(path)
    except StackFileError as exc:
        return exc


def base_from_file(path: Path) -> BaseConfig:
    files = FolderStackFiles(path.resolve().parent)  # the workers of a manager: next to the base file
    try:
        return BaseConfig(label=str(path), config=read_stack_file(path), stack_files=files)
    except StackFileError as exc:
        if path.is_file():  # a broken base: shown as invalid, the head still diffed
            return BaseConfig(label=str(path), config=exc, stack_files=files)
        raise BaseSourceError(
            f"{exc.issue}\n  (--base-file: pass an existing Pulumi.<stack>.yaml, or --base GIT_REF)"
        ) from None


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def base_from_git(stack_path: Path, ref: str) -> BaseConfig:
    """The stack file ``stack_path`` as it was at ``ref`` in the git repository that holds it."""
    if shutil.which("git") is None:
        raise BaseSourceError(
            "error: --base needs git, and git is not on PATH\n"
            "  fix: install git (apt-get install git), or pass --base-file with the old stack file"
        )
    folder = stack_path.resolve().parent
    top = _git(["rev-parse", "--show-toplevel"], folder)
    if top.returncode != 0:
        raise BaseSourceError(
            f"error: {folder} is not inside a git repository, so --base {ref} has nothing to read\n"
            f"  fix: run from a git checkout, or pass --base-file with the old stack file"
        )
    if _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], folder).returncode != 0:
        raise BaseSourceError(
            f"error: git could not find the ref {ref!r} in {top.stdout.strip()}\n"
            f"  fix: fetch it first (git fetch origin {ref.split('/')[-1]}), or pass a branch, tag or commit SHA that "
            f"exists locally (git branch -a); in GitHub Actions check out with fetch-depth: 0"
        )
    root = Path(top.stdout.strip()).resolve()
    relative = stack_path.resolve().relative_to(root).as_posix()
    folder_in_repo = stack_path.resolve().parent.relative_to(root).as_posix()
    files = GitStackFiles(root, "" if folder_in_repo == "." else folder_in_repo, ref)
    if _git(["cat-file", "-e", f"{ref}:{relative}"], folder).returncode != 0:
        return BaseConfig(label=ref, config=None, stack_files=files)  # the stack is new in the working tree
    shown = subprocess.run(["git", "show", f"{ref}:{relative}"], cwd=folder, capture_output=True, timeout=60)
    if shown.returncode != 0:  # bytes, not text: the reader decodes (and refuses what is not UTF-8) itself
        raise BaseSourceError(
            f"error: git show {ref}:{relative} failed: {shown.stderr.decode('utf-8', 'replace').strip()}"
        )
    try:
        return BaseConfig(label=ref, config=parse_stack_bytes(shown.stdout, f"{relative} at {ref}"), stack_files=files)
    except StackFileError as exc:
        return BaseConfig(label=ref, config=exc, stack_files=files)
