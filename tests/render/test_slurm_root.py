"""The test root itself (``scripts/slurm-root.sh``): the reproducible choice of Slurm release suite by suite, the
versioned path, a root built for something else is never deleted, and a missing privilege is named up front with
its fix (a failure in CI, a skip elsewhere). The daemons that run in the root: ``test_slurm_real.py``."""

from __future__ import annotations

import contextlib
import functools
import http.server
import lzma
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.slurm.root import PROJECT_ROOT, SCRIPT, missing_privileges, release_check

DAEMON_TESTS = Path(__file__).with_name("test_slurm_real.py")


def test_ci_builds_the_slurm_root_before_the_suite():
    """In CI the real-Slurm tests must run, so scripts/test.sh builds their root first (they fail without it)."""
    test_sh = (PROJECT_ROOT / "scripts" / "test.sh").read_text()
    ci_block = test_sh.split('CI:-}" = "true" ]; then', 1)[1].split("\nfi\n", 1)[0]
    assert "scripts/slurm-root.sh" in ci_block
    assert test_sh.index("slurm-root.sh") < test_sh.index("-m pytest")


def _script(*args: str, env: dict | None = None, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*prefix, "bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@contextlib.contextmanager
def _fake_mirror(tmp_path: Path, slurmctld: dict[str, str]):
    """A Debian mirror on localhost whose suites carry the given slurmctld versions (suite -> version)."""
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    for suite, version in slurmctld.items():
        d = tmp_path / "debian" / "dists" / suite / "main" / f"binary-{arch}"
        d.mkdir(parents=True)
        stanzas = [
            "Package: slurm-client\nVersion: 99.99.9-1\n",
            f"Package: slurmctld\nVersion: {version}\n",
            "Package: zzz\nVersion: 1.0\n",
        ]
        (d / "Packages.xz").write_bytes(lzma.compress("\n".join(stanzas).encode(), format=lzma.FORMAT_XZ))
    handler = functools.partial(QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/debian"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _needs_dpkg() -> None:
    if shutil.which("dpkg") is None or shutil.which("wget") is None or shutil.which("xz") is None:
        pytest.skip("scripts/slurm-root.sh runs on Debian (dpkg, wget, xz)")


@pytest.mark.parametrize(
    "mirror,chosen,notice",
    [
        ({"sid": "26.05.5-1", "testing": "26.05.4-1"}, "sid 26.05.5-1", None),
        ({"sid": "26.11.1-1", "testing": "26.05.5-1"}, "testing 26.05.5-1", None),  # sid moved on: testing still has it
        ({"sid": "26.11.1-1", "testing": "26.11.0-2"}, "sid 26.11.1-1", "NEWER than the pinned Slinky images' 26.05"),
        ({"testing": "27.05.0-1"}, "testing 27.05.0-1", "sid=none"),  # sid unreadable: the next suite
    ],
    ids=["sid-has-it", "only-testing-has-it", "none-has-it-newest", "sid-missing"],
)
def test_the_build_prefers_the_pinned_slurm_release_suite_by_suite(tmp_path, mirror, chosen, notice):
    _needs_dpkg()
    with _fake_mirror(tmp_path, mirror) as url:
        out = _script("--choose-suite", env={"DEBIAN_MIRROR": url})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == chosen
    if notice:
        assert notice in out.stderr
    else:
        assert out.stderr == ""


def test_the_build_refuses_a_slurm_older_than_the_pinned_release(tmp_path):
    _needs_dpkg()
    with _fake_mirror(tmp_path, {"sid": "25.11.3-1", "testing": "24.11.5-1"}) as url:
        out = _script("--choose-suite", env={"DEBIAN_MIRROR": url})
    assert out.returncode == 1 and out.stdout == ""
    assert "no suite on" in out.stderr and "has Slurm 26.05 or newer (sid=25.11.3-1 testing=24.11.5-1)" in out.stderr


def test_release_check_accepts_the_pinned_release_reports_a_newer_one_and_refuses_an_older_one():
    assert release_check("slurm-wlm 26.05.5")[0] == "same"
    status, sentence = release_check("slurm-wlm 26.11.0")
    assert status == "newer" and "NEWER than the pinned Slinky images' 26.05" in sentence
    assert "not a failure" in sentence
    for old in ("slurm-wlm 25.11.2", "slurm 24.11.5", "slurm-wlm 26.02.0", "no version here"):
        assert release_check(old)[0] == "older", old
    assert release_check("slurm 27.05.1")[0] == "newer"


def test_the_root_path_is_versioned_by_what_it_builds(tmp_path):
    unset = {"SLURM_ROOT": "", "SLURM_ROOT_BASE": ""}  # this very run may use its own base (a cold-machine check)
    default = _script("--path", env=unset).stdout.strip()
    assert re.fullmatch(r"/var/tmp/gpu-cluster/slurm-root-[0-9a-f]{12}", default), default
    based = _script("--path", env={"SLURM_ROOT": "", "SLURM_ROOT_BASE": str(tmp_path)}).stdout.strip()
    assert based == str(tmp_path / default.rsplit("/", 1)[1])
    other = _script("--path", env={**unset, "SLURM_ROOT_SUITES": "testing"}).stdout.strip()
    assert other != default and other.startswith("/var/tmp/gpu-cluster/slurm-root-")
    want = _script("--want").stdout.strip()
    assert want.startswith("release=26.05 suites=sid,testing packages=slurmctld,")
    assert _script("--path", env={"SLURM_ROOT": str(tmp_path / "r")}).stdout.strip() == str(tmp_path / "r")
    # a ready root is recognised by its stamp in milliseconds, with no privileges and no network
    root = tmp_path / "ready"
    root.mkdir()
    (root / ".gpu-cluster-ready").write_text(f"{want}\nslurm-wlm 26.05.5\n")
    out = _script(env={"SLURM_ROOT": str(root), "DEBIAN_MIRROR": "http://127.0.0.1:9/none"})
    assert out.returncode == 0 and out.stdout.strip() == str(root)


def _privileged() -> None:
    """Skip (outside CI) or fail (CI) when this process cannot run the privileged parts."""
    reason = missing_privileges()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true, so this is a failure, not a skip", pytrace=False)
        pytest.skip(reason)


def test_a_root_built_for_something_else_is_never_deleted(tmp_path):
    _privileged()
    root = tmp_path / "old-root"
    (root / "etc").mkdir(parents=True)
    (root / ".gpu-cluster-ready").write_text("suite=sid packages=slurmctld\nslurm-wlm 26.05.5\n")
    (root / "etc" / "in-use").write_text("another clone's tests")
    out = _script(env={"SLURM_ROOT": str(root), "DEBIAN_MIRROR": "http://127.0.0.1:9/none"})
    assert out.returncode == 1 and "exists but was not built for: release=26.05" in out.stderr, out.stderr
    assert (root / "etc" / "in-use").read_text() == "another clone's tests"


DROPS = {
    "no-cap-sys-admin": (
        ("--bounding-set=-sys_admin", "--inh-caps=-all"),
        ("mount -t proc failed", "needs CAP_SYS_ADMIN", "--privileged"),
    ),
    "no-cap-sys-chroot": (
        ("--bounding-set=-sys_chroot", "--inh-caps=-all"),
        ("chroot failed", "needs CAP_SYS_CHROOT", "--privileged"),
    ),
    "not-root": (
        ("--reuid=65534", "--regid=65534", "--clear-groups"),
        ("needs root", "you are uid 65534", "sudo bash scripts/slurm-root.sh"),
    ),
}


def _drop(flags: tuple[str, ...]) -> tuple[str, ...]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("dropping a privilege to test its message needs root and setpriv (util-linux)")
    return ("setpriv", *flags)


@pytest.mark.parametrize("drop", list(DROPS))
def test_a_missing_privilege_is_named_up_front_with_the_fix(drop, tmp_path):
    flags, needles = DROPS[drop]
    prefix = _drop(flags)
    _privileged()  # the positive control: with every privilege, the same check passes
    # a root that is not built yet: the build must stop at the check, before debootstrap or any mount
    out = _script(env={"SLURM_ROOT": str(tmp_path / "root")}, prefix=prefix)
    assert out.returncode == 1, out.stdout + out.stderr
    for needle in needles:
        assert needle in out.stderr, (needle, out.stderr)
    assert not (tmp_path / "root").exists() and not list(tmp_path.glob(".privilege-probe.*"))
    assert _script("--check", prefix=prefix).returncode == 1
    assert _script("--check").returncode == 0


@pytest.mark.slow
def test_ci_reports_the_missing_privilege_as_a_failure_not_a_skip():
    prefix = _drop(DROPS["no-cap-sys-admin"][0])
    out = subprocess.run(
        [
            *prefix,
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"{DAEMON_TESTS}::test_the_root_runs_the_pinned_slurm_release_or_a_newer_one",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=PROJECT_ROOT,
        env={**os.environ, "CI": "true"},
    )
    assert out.returncode == 1, out.stdout[-2000:]
    assert "needs CAP_SYS_ADMIN" in out.stdout and "CI=true, so this is a failure, not a skip" in out.stdout
