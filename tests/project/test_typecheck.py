"""Static type check of the pure packages; the options live in mypy.ini, so `python -m mypy` runs the same check."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent",
           "-p", "catalog", "-p", "scheduling", "-p", "stacks"]


def test_pure_packages_type_check():
    result = subprocess.run(COMMAND, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"mypy failed:\n{result.stdout}{result.stderr}"
