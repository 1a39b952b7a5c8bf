"""The code before a change, checked out for a benchmark to run next to the code now: a temporary detached git worktree
of a ref (commit, branch or tag), removed again whatever happens.

The worktree is a sibling of the repository root (``<parent>/<name>-baseline-<short sha>``), not a folder in /tmp:
stack and workload files name ``../shared`` relative to themselves (``workloads/alibaba-openb.yaml`` reads
``../../shared/traces/...``), which resolves to the same folder from both trees only if they share a parent.

A command started with ``cwd`` = a tree imports that tree's packages: ``python -m pkg`` puts the working directory
first on ``sys.path`` (``python -c`` puts ``''``, the same folder), ahead of site-packages and ``PYTHONPATH``
(unless ``PYTHONSAFEPATH`` is set). ``imported_from`` checks it in a fresh interpreter.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class BaselineError(Exception):
    """A ref that names no commit, a worktree that cannot be made, or a tree that imports someone else's code."""


def _git(args: list[str], repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=120)


def commit_of(repo: Path, ref: str) -> str:
    """The full commit id ``ref`` names in ``repo``."""
    done = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], repo)
    if done.returncode != 0:
        raise BaselineError(
            f"error: --baseline {ref!r} names no commit in {repo}\n"
            f"  fix: pass a commit, branch or tag that `git rev-parse {ref}` knows"
        )
    return done.stdout.strip()


def baseline_path(repo: Path, commit: str) -> Path:
    """``<repo parent>/<repo name>-baseline-<short sha>``."""
    return repo.parent / f"{repo.name}-baseline-{commit[:7]}"


@contextmanager
def baseline_tree(repo: Path, ref: str) -> Iterator[tuple[Path, str]]:
    """``(worktree path, commit)`` of ``ref`` checked out (detached) next to ``repo``; removed on leaving, also on an
    error or Ctrl-C in the body. An existing folder at that path is never touched."""
    commit = commit_of(repo, ref)
    path = baseline_path(repo, commit)
    if path.exists():
        raise BaselineError(
            f"error: {path} exists already (left by an interrupted run?)\n  fix: git worktree remove --force {path}"
        )
    try:
        added = _git(["worktree", "add", "--detach", str(path), commit], repo)
        if added.returncode != 0:
            raise BaselineError(f"error: git worktree add {path} {commit[:7]} failed: {added.stderr.strip()}")
        yield path, commit
    finally:
        remove_tree(repo, path)


def remove_tree(repo: Path, path: Path) -> None:
    """``git worktree remove --force`` (untracked files such as ``__pycache__`` included); a folder git no longer
    knows is deleted and its registration pruned."""
    _git(["worktree", "remove", "--force", str(path)], repo)
    if path.exists():
        shutil.rmtree(path)
    _git(["worktree", "prune"], repo)


def imported_from(tree: Path, modules: list[str], env: dict[str, str] | None = None) -> list[Path]:
    """Where a fresh interpreter started in ``tree`` (as the bench starts it) finds each of ``modules``."""
    code = "import importlib\n" + "".join(f"print(importlib.import_module({m!r}).__file__)\n" for m in modules)
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise BaselineError(f"error: importing {', '.join(modules)} in {tree} failed:\n{done.stderr.strip()}")
    return [Path(line) for line in done.stdout.splitlines()]


def check_imports_from(tree: Path, modules: list[str], env: dict[str, str] | None = None) -> list[Path]:
    """``imported_from``, refused unless every module comes from ``tree``."""
    found = imported_from(tree, modules, env)
    elsewhere = [f"{m}: {f}" for m, f in zip(modules, found) if not f.resolve().is_relative_to(tree.resolve())]
    if elsewhere:
        raise BaselineError(
            f"error: a run in {tree} would import code from elsewhere ({'; '.join(elsewhere)})\n"
            "  fix: unset PYTHONSAFEPATH, so the working directory comes first on sys.path"
        )
    return found
