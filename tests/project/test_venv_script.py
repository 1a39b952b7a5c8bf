"""``scripts/venv.sh``, which both documented commands run first: a first run says what it is doing (it takes minutes),
a built environment is silent, and the venv's python finds the project from any folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/usr/bin/env bash
# stands in for .venv/bin/python: pip and uv succeed without installing anything
echo "$*" >> "$(dirname "$0")/calls.log"
"""


def _project_copy(tmp_path: Path) -> Path:
    """A project folder with the real script, requirements and a venv whose python installs nothing."""
    root = tmp_path / "clone"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "scripts" / "venv.sh", root / "scripts" / "venv.sh")
    for req in ("requirements.txt", "requirements-dev.txt"):
        shutil.copy(PROJECT_ROOT / req, root / req)
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    (root / ".venv" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    return root


def _venv_sh(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(root / "scripts" / "venv.sh"), "requirements.txt"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "GPU_CLUSTER_NO_UV": "1"},
    )


def test_a_first_install_says_what_it_does_and_a_built_venv_says_nothing(tmp_path):
    root = _project_copy(tmp_path)
    first = _venv_sh(root)
    assert first.returncode == 0, first.stderr
    assert "gpu-cluster: installing the pinned packages of requirements.txt into .venv" in first.stderr
    assert "gpu-cluster: .venv ready (" in first.stderr and first.stdout == ""
    assert "--compile" in (root / ".venv" / "bin" / "calls.log").read_text()  # installed packages ship bytecode
    again = _venv_sh(root)
    assert again.returncode == 0 and again.stderr == "" and again.stdout == ""


def test_the_venv_puts_the_project_on_its_path(tmp_path):
    root = _project_copy(tmp_path)
    assert _venv_sh(root).returncode == 0
    assert (root / ".venv/lib/python3.11/site-packages/gpu-cluster-project.pth").read_text().strip() == str(root)


def test_the_projects_python_imports_the_project_from_any_folder(tmp_path):
    # the documented `.venv/bin/python -m preview` used to print "No module named preview" outside the project folder
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    found = subprocess.run(
        [sys.executable, "-c", "import preview.engine as e; print(e.PROJECT_ROOT)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert found.returncode == 0, f"run bash scripts/venv.sh first: {found.stderr}"
    # the venv's own project (a worktree sharing another clone's .venv finds that clone)
    assert (Path(found.stdout.strip()) / "Pulumi.yaml").is_file()
