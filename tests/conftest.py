"""Shared test setup: the project root on sys.path, and access to ``../shared`` (skip locally, never in CI).

Append new fixtures at the end of this file.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))


def shared_dir() -> Path:
    """``../shared`` next to the project root (facts, schemas, charts); may be absent on a developer machine."""
    return PROJECT_ROOT.parent / "shared"


FETCH_COMMAND = "bash scripts/fetch-upstream.sh"
FETCHABLE = ("schemas", "charts")
"""The parts of ``../shared`` that are pinned upstream files, which ``FETCH_COMMAND`` downloads into
``upstream_cache()`` (``facts`` holds research tables that exist only in ``../shared``)."""


def upstream_cache() -> Path:
    """Where ``scripts/fetch-upstream.sh`` puts the pinned upstream files (same layout as ``../shared``)."""
    if os.environ.get("GPU_CLUSTER_UPSTREAM"):
        return Path(os.environ["GPU_CLUSTER_UPSTREAM"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpu-cluster" / "upstream"


def require_shared(*relative: str) -> Path:
    """``relative`` under ``../shared``, else under ``upstream_cache()``; skip when neither has it, but fail in CI
    (``CI=true``) where it must exist. The skip message names the command that fills the cache."""
    path = shared_dir().joinpath(*relative)
    if path.exists():
        return path
    cached = upstream_cache().joinpath(*relative)
    if relative and relative[0] in FETCHABLE and cached.exists():
        return cached
    if relative and relative[0] in FETCHABLE:
        reason = f"{path} is absent and not fetched: run `{FETCH_COMMAND}` (fills {upstream_cache()})"
    else:
        reason = f"{path} is absent (research tables that exist only in the shared folder next to the project)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true, so this is a failure, not a skip", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(name="shared_dir")
def shared_dir_fixture() -> Path:
    """The ``../shared`` folder, or a skip (a failure in CI) when it is absent."""
    return require_shared()


def pytest_terminal_summary(terminalreporter) -> None:
    """Which real Slurm the Slurm tests ran against (``scripts/slurm-root.sh`` records ``slurmctld -V``); printed
    at the end, so it shows with ``-q`` too, with a notice when it is newer than the pinned Slinky images' release."""
    from tests.support.slurm.root import release_check, root_path

    if os.environ.get("GPU_CLUSTER_NO_REAL_PEERS"):  # the quick loop: no real peer ran, say so instead of a version
        terminalreporter.write_line("real Slurm and Helm: not run (the quick loop deselects every real-peer test)")
        return
    stamp = root_path() / ".gpu-cluster-ready"
    if stamp.exists():
        lines = stamp.read_text().splitlines()
        status, sentence = release_check(lines[1])
        notice = "" if status == "same" else f" -- {sentence}"
        terminalreporter.write_line(
            f"real Slurm: slurmctld -V = {lines[1]}; {', '.join(lines[2:5])} ({stamp.parent}){notice}"
        )
    else:
        terminalreporter.write_line("real Slurm: test root not built (scripts/slurm-root.sh); real-Slurm tests skipped")


@pytest.fixture(autouse=True)
def _restore_language_host_config():
    """Tests that call ``install_mocks`` directly leave the stack config in ``PULUMI_CONFIG`` (as a program run
    would); put it back after each test so it never reaches a later test or the policy pack subprocess."""
    from preview.engine import restored_config_environment

    with restored_config_environment():
        yield


def pytest_collection_modifyitems(config, items) -> None:
    """Mark the tests that start a real peer (``real_slurm``, ``real_helm``) from what they call, so a new test gets
    its marker without anyone remembering it; the quick loop (``scripts/test.sh --quick``) deselects them."""
    from tests.support.durations import is_slow, recorded
    from tests.support.peers import peer_markers

    modules = dict(sys.modules)
    slow = (
        recorded()
    )  # tests a full run measured at durations.SLOW_S or more (tests/durations.json): left out of the quick loop
    for item in items:
        for marker in peer_markers(item, modules):
            if marker not in item.keywords:
                item.add_marker(marker)
        if is_slow(item.nodeid, slow) and "slow" not in item.keywords:
            item.add_marker("slow")


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help="add the tests this run measured at tests.support.durations.SLOW_S or more to "
        "tests/durations.json (their slow marker keeps them out of the quick loop)",
    )


_MEASURED: dict[str, float] = {}
"""CPU seconds of each test's setup and call, as its worker measured them (CPU, not wall: a loaded machine stretches
wall time, not the work), gathered where the reports arrive."""


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    item._cpu_started = time.process_time()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "call" and hasattr(item, "_cpu_started"):  # setup + call, carried to the controller by the report
        outcome.get_result().user_properties.append(("cpu_s", time.process_time() - item._cpu_started))


def pytest_runtest_logreport(report) -> None:
    for name, value in report.user_properties:
        if name == "cpu_s":
            _MEASURED[report.nodeid] = max(_MEASURED.get(report.nodeid, 0.0), value)


def pytest_sessionfinish(session) -> None:
    worker = hasattr(session.config, "workerinput")  # under xdist the controller sees every report and writes once
    if session.config.getoption("--record-durations") and _MEASURED and not worker:
        from tests.support.durations import merged, recorded, write

        write(merged(recorded(), _MEASURED))
