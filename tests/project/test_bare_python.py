"""Every documented ``python -m`` command run by a python without the project's dependencies (``-S``: no
site-packages, as a bare system python) exits 2 with what to run instead, never a traceback with exit 1 (the code
CI reads as a policy violation)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stacks.validate.environment import stack_name_problem
from tests.conftest import PROJECT_ROOT

COMMANDS = [
    ["policies.docs"],
    ["catalog", "import-facts"],
    ["catalog", "refresh"],
    ["preview.diff.comment"],
    ["preview", "--stack", "dev"],
    ["whatif", "--stack", "gke-kueue"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_python_without_the_dependencies_gets_the_fix_and_exit_2(command):
    proc = subprocess.run(
        [sys.executable, "-S", "-m", *command], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    first, fix = proc.stderr.splitlines()[:2]
    assert first.startswith(f"error: {sys.executable} lacks ") and "(the project's dependencies" in first
    assert f".venv/bin/python -m {command[0]} " in fix and f"(from {PROJECT_ROOT};" in fix  # the project folder


def test_a_stack_file_given_as_a_stack_name_points_at_the_project_folder():
    assert f"reads Pulumi.dev.yaml in {PROJECT_ROOT})" in stack_name_problem("--stack", "Pulumi.dev.yaml")
