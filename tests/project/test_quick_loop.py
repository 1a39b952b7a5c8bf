"""The quick loop (``bash scripts/test.sh --quick``) runs no real peer: the tests that start real Slurm or run real
Helm carry their marker without anyone adding it, and a test that reaches a peer unmarked fails in the quick loop
instead of starting it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import PROJECT_ROOT
from tests.support import peers
from tests.support.helm import binary
from tests.support.helm.examples import rendered
from tests.support.slurm.root import Chroot, ensure_root

QUICK = "not real_slurm and not real_helm and not slow and not fuzz"


def _helper_that_renders():
    return rendered("dev")


def _helper_that_does_not():
    return "dev"


def test_a_test_is_seen_to_start_helm_through_a_helper_of_its_module():
    targets = {id(rendered)}
    module = globals()
    assert peers.reaches([lambda: _helper_that_renders()], module, targets)
    assert not peers.reaches([lambda: _helper_that_does_not()], module, targets)


def test_a_test_is_seen_to_start_slurm_from_a_nested_function():
    def uses_the_root():
        def inner():
            return Chroot(ensure_root())

        return inner

    assert peers.reaches([uses_the_root], {**globals(), **locals()}, {id(ensure_root)})


@pytest.mark.parametrize(
    "start, marker", [(lambda: binary.helm_path(), "real_helm"), (lambda: ensure_root(), "real_slurm")]
)
def test_the_quick_loop_refuses_to_start_a_peer_and_names_the_marker(monkeypatch, start, marker):
    monkeypatch.setenv(peers.NO_REAL_PEERS, "1")
    with pytest.raises(pytest.fail.Exception, match=f"not marked {marker}: the quick loop runs no real peer"):
        start()


def _collected(marks: str) -> set[str]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            marks,
            "tests/render",
            "tests/components/test_helm_releases.py",
            "tests/whatif/slurm/test_whatif_real_slurm.py",
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr
    return {line.split("[")[0] for line in out.stdout.splitlines() if "::" in line}  # test functions


@pytest.mark.slow
def test_the_quick_selection_leaves_out_every_real_peer_test_and_keeps_the_unit_tests():
    quick = _collected(QUICK)
    peers_only = _collected("real_slurm or real_helm")
    modules = {node.split("::")[0] for node in quick}
    for path in (
        "tests/render/test_slurm_real.py",
        "tests/render/test_fabric_task_env_real.py",
        "tests/render/test_slurm_scaling_real.py",
        "tests/whatif/slurm/test_whatif_real_slurm.py",
    ):
        assert path not in modules and any(n.startswith(path) for n in peers_only), path
    helm3 = "tests/components/test_helm_releases.py::test_every_release_renders_and_passes_the_checks_with_helm3"
    assert helm3 in peers_only and helm3 not in quick
    assert "tests/render/test_kueue_render.py" in modules
