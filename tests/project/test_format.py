"""The formatter (``ruff format``, line length 120 from pyproject.toml): the whole tree stays formatted. The check
also proves the formatter reads the project's settings (a file over the line length is reformatted, one under it is
left alone). ``.ruff-format-enforced`` at the repository root marks the tree as formatted; the check needs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ENFORCED = PROJECT_ROOT / ".ruff-format-enforced"
COMMAND = [sys.executable, "-m", "ruff", "format", "--no-cache", "--check"]


def _format_check(*args: str, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_tree_is_formatted_once_formatting_is_enforced():
    assert ENFORCED.exists(), "the tree was formatted once and stays formatted: restore .ruff-format-enforced"
    result = _format_check(".")
    assert result.returncode == 0, f"ruff format would change these files (run: ruff format FILE):\n{result.stdout}"


@pytest.mark.slow
def test_the_formatter_reads_the_projects_line_length(tmp_path):
    (tmp_path / "pyproject.toml").write_text((PROJECT_ROOT / "pyproject.toml").read_text())
    (tmp_path / "long.py").write_text("x = [" + ", ".join(["1234567890"] * 10) + "]\n")  # 126 columns: over 120
    (tmp_path / "short.py").write_text("x = [" + ", ".join(["1234567890"] * 9) + "]\n")  # 114 columns: kept
    result = _format_check(cwd=tmp_path)
    assert result.returncode == 1 and "long.py" in result.stdout and "short.py" not in result.stdout, result.stdout
