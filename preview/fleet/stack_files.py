"""Where a fleet manager's worker stack files are read from: the same revision as the manager's own stack file.

The preview of the working tree reads ``Pulumi.<worker>.yaml`` next to the program; the base side of a diff
(``--base REF``) reads it at that git ref, so a PR that changes a worker shows the change in the manager's fleet
totals instead of the same worker on both sides; ``--base-file FILE`` reads the workers next to FILE.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from stacks.validate.stack_file import StackFileError, parse_stack_bytes, read_stack_file

StackConfig = dict[str, Any] | StackFileError | None
"""One stack file's ``config:`` map as read, why it could not be read, or None (there is no such file)."""


class StackFiles(Protocol):
    @property
    def where(self) -> str:
        """Where the files come from, as the messages name it (a folder, or ``origin/main``)."""
        ...

    def read(self, stack: str) -> StackConfig:
        """``Pulumi.<stack>.yaml`` there."""
        ...

    def how_to_add(self, stack: str) -> str:
        """How to provide a missing ``Pulumi.<stack>.yaml`` there (the fix of the exit-2 message)."""
        ...


def file_name(stack: str) -> str:
    return f"Pulumi.{stack}.yaml"


@dataclass(frozen=True)
class FolderStackFiles:
    """Stack files in a folder: the working tree, or the folder of a ``--base-file``."""

    root: Path

    @property
    def where(self) -> str:
        return str(self.root)

    def read(self, stack: str) -> StackConfig:
        path = self.root / file_name(stack)
        if not path.exists() and not path.is_symlink():
            return None
        try:
            return read_stack_file(path)
        except StackFileError as exc:
            return exc

    def how_to_add(self, stack: str) -> str:
        return f"add {file_name(stack)} to {self.root}"


@dataclass(frozen=True)
class GitStackFiles:
    """Stack files as committed at ``ref``: ``git show <ref>:<folder>/Pulumi.<stack>.yaml`` in the repository
    ``top``. The caller has checked that git, the repository and the ref exist."""

    top: Path
    folder: str
    """The stack files' folder relative to ``top`` (``""`` at the top), POSIX form."""
    ref: str

    @property
    def where(self) -> str:
        return self.ref

    def _path(self, stack: str) -> str:
        return f"{self.folder}/{file_name(stack)}" if self.folder else file_name(stack)

    def read(self, stack: str) -> StackConfig:
        spec = f"{self.ref}:{self._path(stack)}"
        if (
            subprocess.run(["git", "cat-file", "-e", spec], cwd=self.top, capture_output=True, timeout=60).returncode
            != 0
        ):
            return None
        shown = subprocess.run(["git", "show", spec], cwd=self.top, capture_output=True, timeout=60)
        if shown.returncode != 0:
            return None
        try:  # bytes: the reader decodes (and refuses what is not UTF-8) itself
            return parse_stack_bytes(shown.stdout, f"{self._path(stack)} at {self.ref}")
        except StackFileError as exc:
            return exc

    def how_to_add(self, stack: str) -> str:
        return f"{file_name(stack)} is not committed at {self.ref}; diff against a ref that has it"
