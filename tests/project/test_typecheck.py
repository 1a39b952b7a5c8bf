"""Static type check of every package; the options live in pyproject.toml, so `python -m mypy` runs the same check."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.project.import_graph import top_level_units

PROJECT_ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "mypy"]  # packages and options: [tool.mypy] in pyproject.toml
NOT_TYPE_CHECKED = {"tests", "__main__.py"}
"""The tests (pytest fixtures and helpers, checked by running them) and the three-line program entry."""


def _mypy_settings() -> dict:
    return tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["mypy"]


def test_the_mypy_settings_list_every_package():
    packages = {
        unit.split(".")[0] for unit in top_level_units(PROJECT_ROOT) - NOT_TYPE_CHECKED
    }  # stacks.spec: in stacks
    assert set(_mypy_settings()["packages"]) == packages, (
        "add the new package to `packages` under [tool.mypy] in pyproject.toml (or remove a package that is gone)"
    )


def test_every_function_must_be_annotated():
    # an unannotated def is not checked at all by mypy: the flag makes the check cover every function body
    assert _mypy_settings().get("disallow_untyped_defs") is True


@pytest.mark.slow
def test_every_package_type_checks():
    result = subprocess.run(COMMAND, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"mypy failed:\n{result.stdout}{result.stderr}"
