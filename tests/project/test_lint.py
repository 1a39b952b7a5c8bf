"""The linter (ruff, pinned in requirements-dev.txt; rules under [tool.ruff] in pyproject.toml) passes on the whole
tree, so `python -m ruff check` in a contributor's checkout reports what CI would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise"]


def _ruff(*args: str, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_tree_passes_the_linter():
    result = _ruff()
    assert result.returncode == 0, (
        f"ruff check found problems (fix them, or `ruff check --fix`):\n{result.stdout}{result.stderr}"
    )


@pytest.mark.slow
def test_the_linter_reads_the_projects_rules_and_reports_an_unused_import(tmp_path):
    # the same settings on a file with a known finding: a linter that found nothing would pass the test above too
    (tmp_path / "pyproject.toml").write_text((PROJECT_ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import os\n")
    result = _ruff(cwd=tmp_path)
    assert result.returncode == 1 and "F401" in result.stdout, result.stdout + result.stderr
