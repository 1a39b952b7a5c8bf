"""Static type check of every package; the options live in mypy.ini, so `python -m mypy` runs the same check."""
from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

from tests.support.project.import_graph import top_level_units

PROJECT_ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "mypy"]  # packages and options: mypy.ini
NOT_TYPE_CHECKED = {"tests", "__main__.py"}
"""The tests (pytest fixtures and helpers, checked by running them) and the three-line program entry."""


def _configured_packages() -> set[str]:
    config = configparser.ConfigParser()
    config.read(PROJECT_ROOT / "mypy.ini")
    return {p.strip() for p in config["mypy"]["packages"].split(",")}


def test_mypy_ini_lists_every_package():
    top_level = {"stacks" if u.startswith("stacks.") else u for u in top_level_units(PROJECT_ROOT)}  # stacks.spec
    assert _configured_packages() == top_level - NOT_TYPE_CHECKED, \
        "add the new package to `packages` in mypy.ini (or remove a package that is gone)"


def test_every_package_type_checks():
    result = subprocess.run(COMMAND, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"mypy failed:\n{result.stdout}{result.stderr}"
