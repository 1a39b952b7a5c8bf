"""The commands the docs show, and how a test runs one: as a new user would, a fresh process from the project
folder. A command is in a fenced ``bash`` block of README.md, docs/*.md or policies/RULES.md, in their inline code,
or in the comments of the stack files and PulumiPolicy.yaml (``tests/project/test_documented_commands.py``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import PROJECT_ROOT

PY = ".venv/bin/python"
PAGES = [
    PROJECT_ROOT / "README.md",
    PROJECT_ROOT / "CONTRIBUTING.md",
    *sorted((PROJECT_ROOT / "docs").glob("*.md")),
    *sorted((PROJECT_ROOT / "docs" / "contributing").glob("*.md")),
    PROJECT_ROOT / "policies" / "RULES.md",
]
COMMENTED = [*sorted(PROJECT_ROOT.glob("Pulumi.*.yaml")), PROJECT_ROOT / "policies" / "PulumiPolicy.yaml"]
FENCE = re.compile(r"^```(?:bash|sh)\n(.*?)^```", re.MULTILINE | re.DOTALL)
COMMAND = re.compile(r"((?:sudo )?(?:\.venv/bin/python|python3?|bash scripts/|pulumi )[^#\n]*?)\s*(?:#.*)?$")
INLINE = re.compile(r"`((?:sudo )?(?:\.venv/bin/python -m|python -m|bash scripts/)[^`]*)`")
COMMENT_COMMAND = re.compile(
    r"#.*?((?:\.venv/bin/python -m|bash scripts/preview\.sh|pulumi preview)[^#\n(]*?)\s*"
    r"(?:\(.*)?$"
)


def documented_commands() -> set[str]:
    """Each command as written (comment stripped; a line ending in a backslash joined with the next)."""
    found = set()
    for page in PAGES:
        found |= {
            re.sub(r"\s+", " ", c).strip() for c in INLINE.findall(FENCE.sub("", page.read_text(encoding="utf-8")))
        }
        for block in FENCE.findall(page.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                if m := COMMAND.match(line.strip()):
                    found.add(re.sub(r"\s+", " ", m.group(1)).strip())
    # prose naming a program that needs arguments is no command
    found = {
        c for c in found if not re.fullmatch(r"(\.venv/bin/)?python -m( preview| whatif| preview\.diff\.comment)?", c)
    }
    for file in COMMENTED:
        for line in file.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("#") and (m := COMMENT_COMMAND.search(line)):
                found.add(m.group(1).strip())
    return found


def stack_comment_commands() -> set[str]:
    """The preview command each stack file's comment shows for that stack."""
    return {
        f"bash scripts/preview.sh {p.name[len('Pulumi.') : -len('.yaml')]}"
        for p in PROJECT_ROOT.glob("Pulumi.*.yaml")
        if p.name != "Pulumi.yaml"
    }


def run(argv: tuple[str, ...] | list[str], tmp: Path | None = None) -> subprocess.CompletedProcess:
    argv = [a.replace("{tmp}", str(tmp)) for a in argv]
    return subprocess.run(argv, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
