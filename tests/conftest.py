"""Shared test setup: the project root on sys.path, and access to ``../shared`` (skip locally, never in CI).

Append new fixtures at the end of this file.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))


def shared_dir() -> Path:
    """``../shared`` next to the project root (facts, schemas); may be absent on a developer machine."""
    return PROJECT_ROOT.parent / "shared"


def require_shared(*relative: str) -> Path:
    """``shared_dir() / relative``; skip when it is absent, but fail in CI (``CI=true``) where it must exist."""
    path = shared_dir().joinpath(*relative)
    if not path.exists():
        reason = f"{path} is absent (tests that read ../shared need the shared folder next to the project)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true, so this is a failure, not a skip", pytrace=False)
        pytest.skip(reason)
    return path


@pytest.fixture(name="shared_dir")
def shared_dir_fixture() -> Path:
    """The ``../shared`` folder, or a skip (a failure in CI) when it is absent."""
    return require_shared()


def pytest_terminal_summary(terminalreporter) -> None:
    """Which real Slurm the Slurm tests ran against (``scripts/slurm-root.sh`` records ``slurmctld -V``); printed
    at the end, so it shows with ``-q`` too, with a notice when it is newer than the pinned Slinky images' release."""
    from tests.support.slurm_root import release_check, root_path

    stamp = root_path() / ".gpu-cluster-ready"
    if stamp.exists():
        lines = stamp.read_text().splitlines()
        status, sentence = release_check(lines[1])
        notice = "" if status == "same" else f" -- {sentence}"
        terminalreporter.write_line(f"real Slurm: slurmctld -V = {lines[1]}; {', '.join(lines[2:5])} "
                                    f"({stamp.parent}){notice}")
    else:
        terminalreporter.write_line("real Slurm: test root not built (scripts/slurm-root.sh); real-Slurm tests skipped")


@pytest.fixture(autouse=True)
def _restore_language_host_config():
    """Tests that call ``install_mocks`` directly leave the stack config in ``PULUMI_CONFIG`` (as a program run
    would); put it back after each test so it never reaches a later test or the policy pack subprocess."""
    from preview.engine import restored_config_environment

    with restored_config_environment():
        yield
