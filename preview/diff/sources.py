"""Where the base side of a diff comes from: a stack file at a git ref (``git show REF:path``) or another file.

Only the stack file is read at the base; the program (``__main__.py``, components, policies) is the working tree's,
so the diff compares configurations, not code.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class BaseSourceError(Exception):
    """The base could not be read; the message says what, and how to fix it."""


@dataclass(frozen=True)
class BaseConfig:
    label: str
    """How the base is named in the output: ``origin/main`` or a file path."""
    config: dict[str, Any] | None
    """The ``config:`` map of the stack file at the base; None when the stack did not exist there (a new stack)."""


def config_from_text(text: str, where: str) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise BaseSourceError(f"error: {where} is not valid YAML: {exc}\n  fix: repair the YAML syntax") from None
    if not isinstance(doc, dict):
        raise BaseSourceError(f"error: {where} is not a Pulumi stack file (a YAML mapping with a config: key)")
    return dict(doc.get("config") or {})


def base_from_file(path: Path) -> BaseConfig:
    if not path.is_file():
        raise BaseSourceError(f"error: base stack file {path} does not exist\n"
                              f"  fix: pass --base-file with an existing Pulumi.<stack>.yaml, or --base GIT_REF")
    return BaseConfig(label=str(path), config=config_from_text(path.read_text(encoding="utf-8"), str(path)))


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def base_from_git(stack_path: Path, ref: str) -> BaseConfig:
    """The stack file ``stack_path`` as it was at ``ref`` in the git repository that holds it."""
    if shutil.which("git") is None:
        raise BaseSourceError("error: --base needs git, and git is not on PATH\n"
                              "  fix: install git (apt-get install git), or pass --base-file with the old stack file")
    folder = stack_path.resolve().parent
    top = _git(["rev-parse", "--show-toplevel"], folder)
    if top.returncode != 0:
        raise BaseSourceError(f"error: {folder} is not inside a git repository, so --base {ref} has nothing to read\n"
                              f"  fix: run from a git checkout, or pass --base-file with the old stack file")
    if _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], folder).returncode != 0:
        raise BaseSourceError(
            f"error: git could not find the ref {ref!r} in {top.stdout.strip()}\n"
            f"  fix: fetch it first (git fetch origin {ref.split('/')[-1]}), or pass a branch, tag or commit SHA that "
            f"exists locally (git branch -a); in GitHub Actions check out with fetch-depth: 0")
    relative = stack_path.resolve().relative_to(Path(top.stdout.strip()).resolve()).as_posix()
    if _git(["cat-file", "-e", f"{ref}:{relative}"], folder).returncode != 0:
        return BaseConfig(label=ref, config=None)  # the stack is new in the working tree
    shown = _git(["show", f"{ref}:{relative}"], folder)
    if shown.returncode != 0:
        raise BaseSourceError(f"error: git show {ref}:{relative} failed: {shown.stderr.strip()}")
    return BaseConfig(label=ref, config=config_from_text(shown.stdout, f"{relative} at {ref}"))
