"""Every rendered Slurm config, loaded by a real Slurm 26.05 controller (the release the pinned Slinky images run;
a newer one only when the Debian mirror has no 26.05 any more, reported as such).

For each stack with ``workload: slurm`` (every example stack that has it, plus synthetic ones), the Helm values the
program really registers are turned into what Slinky would write (``tests/support/slinky_emulation.py``); then a real
slurmctld must start with no ``error:``/``fatal:`` line and no warning outside ``TOLERATED_WARNINGS``, show exactly
the planned partitions, nodes, GRES and blocks, accept each pool's largest gang and refuse one node or one GPU
more. With accounting, a real slurmdbd on a real MariaDB gets the rendered ``sacctmgr`` script (twice: idempotent)
through the rendered client slurm.conf, and ``sshare`` must show the declared shares.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import lzma
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from components.charts import SLURM
from preview.engine import run_program
from scheduling.slurm_plan import ALL_NODESETS, SlurmPlan, plan_slurm
from scheduling.slurm_values import client_slurm_conf
from stacks.facts import pool_facts
from validation.load import decode_config, load_spec
from tests.conftest import require_shared
from tests.support.helm_values import helm_merge
from tests.support.recorded import one
from tests.support.slurm_configs import slurm_configs
from tests.support.slurm_real import (
    Chroot, SlurmController, SlurmDbd, Workdir, ensure_root, release_check, versions,
)

TOLERATED_WARNINGS = (
    # Slinky's nodes are dynamic: at start-up no node exists yet, so no block has one (they join from the
    # Kubernetes node annotation, as the test's `scontrol create ... Topology=` does).
    re.compile(r"warning: Blocks do not contain any nodes"),
    re.compile(r"warning: Switches do not contain any nodes"),
)
CONFIGS = slurm_configs()


@pytest.fixture(scope="module")
def chroot():
    root = ensure_root()
    c = Chroot(root)
    print(f"\nreal Slurm: {'; '.join(versions(root))}")
    yield c
    c.close()


@pytest.fixture(scope="module")
def slurm_key() -> bytes:
    return secrets.token_bytes(1024)


@pytest.fixture(scope="module")
def dbd(chroot, slurm_key):
    d = SlurmDbd(chroot, slurm_key)
    yield d
    d.stop()


class NewerSlurmThanPinned(UserWarning):
    """The test root's Slurm is newer than the pinned Slinky images' release (the mirror no longer has it)."""


def test_the_root_runs_the_pinned_slurm_release_or_a_newer_one(chroot):
    out = chroot.run(["slurmctld", "-V"], check=True)
    status, sentence = release_check(out.stdout.strip())
    print(f"slurmctld -V: {out.stdout.strip()} ({sentence})")
    assert status != "older", sentence
    if status == "newer":  # shown in pytest's warnings summary, and in the final "real Slurm:" line (conftest)
        import warnings

        warnings.warn(sentence, NewerSlurmThanPinned)


def _plan_and_values(config: dict) -> tuple[SlurmPlan, dict]:
    spec, _ = load_spec(decode_config(config))
    from catalog import load_catalog
    cat = load_catalog()
    plan = plan_slurm(spec.scheduling, [pool_facts(spec, p, cat) for p in spec.node_pools])
    release = one(run_program(config), "kubernetes:helm.sh/v3:Release", "slurm-slurm")
    defaults = yaml.safe_load(require_shared("schemas", SLURM.default_values).read_text())
    return plan, helm_merge(defaults, release.redacted_inputs["values"])  # what the chart's templates see


def _bad_log_lines(log: str) -> list[str]:
    bad = []
    for line in log.splitlines():
        if re.search(r"\b(error|fatal):", line):
            bad.append(line)
        elif "warning:" in line and not any(t.search(line) for t in TOLERATED_WARNINGS):
            bad.append(line)
    return bad


def _records(text: str, key: str) -> dict[str, dict[str, str]]:
    """``scontrol show ... -o`` lines -> {name: {field: value}}."""
    out = {}
    for line in text.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        if key in fields:
            out[fields[key]] = fields
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_real_slurmctld_accepts_and_schedules_the_rendered_config(name, chroot, slurm_key, request):
    plan, values = _plan_and_values(CONFIGS[name])
    dbd = request.getfixturevalue("dbd") if plan.accounting else None
    ctl = SlurmController(chroot, values, slurm_key, dbd)
    try:
        assert _bad_log_lines(ctl.log()) == [], "slurmctld logged errors or unexpected warnings at start-up"
        ctl.create_nodes()

        # partitions: exactly the planned ones, with the planned node counts and topology
        parts = _records(ctl.run("scontrol", "-o", "show", "partition").stdout, "PartitionName")
        assert sorted(parts) == sorted(p.name for p in plan.partitions)
        replicas = {n.pool: n.replicas for n in plan.nodesets}
        for p in plan.partitions:
            pools = list(replicas) if p.nodesets == (ALL_NODESETS,) else list(p.nodesets)
            assert int(parts[p.name]["TotalNodes"]) == sum(replicas[x] for x in pools), p.name
            assert parts[p.name].get("Topology") == p.options.get("Topology"), p.name
            assert parts[p.name]["Default"] == p.options["Default"], p.name

        # nodes: every NodeSet pod, with the catalog's GRES and the planned CPUs/memory
        nodes = _records(ctl.run("scontrol", "-o", "show", "node").stdout, "NodeName")
        assert len(nodes) == sum(replicas.values())
        for n in plan.nodesets:
            mine = [f for f in nodes.values() if f["AvailableFeatures"] == n.pool]
            assert len(mine) == n.replicas, n.pool
            assert {f["Gres"] for f in mine} == {n.gres}
            assert {int(f["CPUTot"]) for f in mine} == {n.cpus}
            assert {int(f["RealMemory"]) for f in mine} == {n.real_memory_mib}

        # blocks: the declared blocks, each with block-size nodes once the nodes have joined
        for b in plan.topology.blocks:
            shown = _records(ctl.run("scontrol", "show", "topology", b.name).stdout, "BlockName")
            assert sorted(shown) == sorted(b.blocks), b.name
            assert {int(f["BlockSize"]) for f in shown.values()} == {b.block_size}
        if plan.topology.tree is not None:
            shown = ctl.run("scontrol", "show", "topology", plan.topology.tree.name).stdout
            for leaves in plan.topology.tree.zones.values():
                for leaf in leaves:
                    assert re.search(rf"SwitchName={re.escape(leaf)} .*Nodes={re.escape(leaf)}-", shown), shown

        # scheduling: each pool's largest gang fits; one node or one GPU more does not
        for n in plan.nodesets:
            gang = ["sbatch", "--test-only", "-p", n.pool, "--wrap", "true"]
            ok = ctl.run(*gang, "-N", str(n.replicas), f"--gres=gpu:{n.gpu_type}:{n.gpus}")
            assert ok.returncode == 0 and f"in partition {n.pool}" in ok.stderr, ok.stderr
            assert ctl.run(*gang, "-N", str(n.replicas + 1), f"--gres=gpu:{n.gpus}").returncode != 0
            too_many = ctl.run(*gang, "-N", str(n.replicas), f"--gres=gpu:{n.gpus + 1}")
            assert too_many.returncode != 0 and "Requested node configuration is not available" in too_many.stderr

        if plan.accounting:
            _apply_and_check_accounts(ctl, chroot, plan, values["clusterName"], dbd, slurm_key)
        assert _bad_log_lines(ctl.log()) == [], "slurmctld logged errors or unexpected warnings"
    finally:
        ctl.stop()


def _apply_and_check_accounts(ctl: SlurmController, chroot: Chroot, plan: SlurmPlan, cluster: str, dbd: SlurmDbd,
                              slurm_key: bytes) -> None:
    client = Workdir(chroot, f"client-{cluster}")
    try:
        client.write("etc/slurm.conf", client_slurm_conf(cluster, "localhost", ctl.port, "localhost", dbd.port))
        client.write("etc/slurm.key", slurm_key, 0o600)
        client.write("apply-accounts.sh", plan.sacctmgr_script(cluster), 0o755)
        conf = f"{client.inside}/etc/slurm.conf"
        for attempt in (1, 2):  # the second run must succeed and change nothing
            out = chroot.run(["/bin/sh", f"{client.inside}/apply-accounts.sh"], conf=conf, timeout=120)
            assert out.returncode == 0, f"run {attempt}: {out.stdout}{out.stderr}"
        shown_qos = {line.split("|")[0]: line.split("|")[1:] for line in chroot.run(
            ["sacctmgr", "-n", "-P", "show", "qos", "format=name,priority,preempt"], conf=conf).stdout.splitlines()}
        for q in plan.qos:
            assert shown_qos[q.name][0] == str(q.priority)
            assert sorted(filter(None, shown_qos[q.name][1].split(","))) == sorted(q.preempts)
        share = {line.split("|")[0].strip(): line.split("|")[1] for line in chroot.run(
            ["sshare", "-n", "-P", "-a", "-o", "Account,RawShares,User"], conf=ctl.conf).stdout.splitlines()
            if line.split("|")[2] == ""}
        for a in plan.accounts:
            assert share.get(a.name) == str(a.fairshare), share
        assoc = {f[0]: f[2:] for f in (line.split("|") for line in chroot.run(
            ["sacctmgr", "-n", "-P", "show", "assoc", f"cluster={cluster}", "format=account,user,grptres,qos,defaultqos"],
            conf=conf).stdout.splitlines()) if f[1] == ""}  # account-level associations (no user)
        for a in plan.accounts:
            grp, qos_list, default = assoc[a.name]
            assert sorted(filter(None, grp.split(","))) == sorted(f"gres/gpu:{t}={n}" for t, n in a.gpu_caps)
            assert sorted(filter(None, qos_list.split(","))) == sorted(a.qos)
            assert default == (a.default_qos or "")
        since_start = dbd.log().rsplit("started", 1)[-1]  # a retried first start may have logged error 5027
        assert [ln for ln in since_start.splitlines() if re.search(r"\b(error|fatal):", ln)] == [], since_start
    finally:
        client.remove()


def test_ci_builds_the_slurm_root_before_the_suite():
    """In CI the real-Slurm tests must run, so scripts/test.sh builds their root first (they fail without it)."""
    from pathlib import Path

    test_sh = (Path(__file__).resolve().parents[2] / "scripts" / "test.sh").read_text()
    ci_block = test_sh.split("CI:-}\" = \"true\" ]; then", 1)[1].split("\nfi\n", 1)[0]
    assert "scripts/slurm-root.sh" in ci_block
    assert test_sh.index("slurm-root.sh") < test_sh.index("-m pytest")


# -- the test root itself: reproducible choice of Slurm, versioned path, privileges, ports --------------------------
SCRIPT = str(Path(__file__).resolve().parents[2] / "scripts" / "slurm-root.sh")


def _script(*args: str, env: dict | None = None, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, "bash", SCRIPT, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


@contextlib.contextmanager
def _fake_mirror(tmp_path: Path, slurmctld: dict[str, str]):
    """A Debian mirror on localhost whose suites carry the given slurmctld versions (suite -> version)."""
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    for suite, version in slurmctld.items():
        d = tmp_path / "debian" / "dists" / suite / "main" / f"binary-{arch}"
        d.mkdir(parents=True)
        stanzas = [f"Package: slurm-client\nVersion: 99.99.9-1\n", f"Package: slurmctld\nVersion: {version}\n",
                   "Package: zzz\nVersion: 1.0\n"]
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


@pytest.mark.parametrize("mirror,chosen,notice", [
    ({"sid": "26.05.5-1", "testing": "26.05.4-1"}, "sid 26.05.5-1", None),
    ({"sid": "26.11.1-1", "testing": "26.05.5-1"}, "testing 26.05.5-1", None),  # sid moved on: testing still has it
    ({"sid": "26.11.1-1", "testing": "26.11.0-2"}, "sid 26.11.1-1", "NEWER than the pinned Slinky images' 26.05"),
    ({"testing": "27.05.0-1"}, "testing 27.05.0-1", "sid=none"),  # sid unreadable: the next suite
], ids=["sid-has-it", "only-testing-has-it", "none-has-it-newest", "sid-missing"])
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
    default = _script("--path", env={"SLURM_ROOT": ""}).stdout.strip()
    assert re.fullmatch(r"/var/tmp/gpu-cluster/slurm-root-[0-9a-f]{12}", default), default
    other = _script("--path", env={"SLURM_ROOT": "", "SLURM_ROOT_SUITES": "testing"}).stdout.strip()
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
    from tests.support.slurm_real import missing_privileges

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
    "no-cap-sys-admin": (("--bounding-set=-sys_admin", "--inh-caps=-all"),
                         ("mount -t proc failed", "needs CAP_SYS_ADMIN", "--privileged")),
    "no-cap-sys-chroot": (("--bounding-set=-sys_chroot", "--inh-caps=-all"),
                          ("chroot failed", "needs CAP_SYS_CHROOT", "--privileged")),
    "not-root": (("--reuid=65534", "--regid=65534", "--clear-groups"),
                 ("needs root", "you are uid 65534", "sudo bash scripts/slurm-root.sh")),
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


def test_ci_reports_the_missing_privilege_as_a_failure_not_a_skip():
    prefix = _drop(DROPS["no-cap-sys-admin"][0])
    out = subprocess.run([*prefix, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          f"{__file__}::test_the_root_runs_the_pinned_slurm_release_or_a_newer_one"],
                         capture_output=True, text=True, timeout=300, cwd=Path(SCRIPT).parent.parent,
                         env={**os.environ, "CI": "true"})
    assert out.returncode == 1, out.stdout[-2000:]
    assert "needs CAP_SYS_ADMIN" in out.stdout and "CI=true, so this is a failure, not a skip" in out.stdout


def test_a_daemon_whose_port_was_taken_starts_again_on_fresh_ports(chroot, slurm_key, monkeypatch):
    """Another process binds the port between free_port() and the daemon's bind: each daemon is started again on
    fresh ports instead of failing the test."""
    import tests.support.slurm_real as real

    holder = socket.socket()
    holder.bind(("0.0.0.0", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    handed: list[int] = []
    script = iter([taken, None, taken])  # mariadbd, (retry), slurmdbd; then slurmctld below

    def racing_free_port() -> int:
        port = next(script, None) or real_free_port()
        handed.append(port)
        return port

    real_free_port = real.free_port
    monkeypatch.setattr(real, "free_port", racing_free_port)
    try:
        d = SlurmDbd(chroot, slurm_key, name="dbd-port-race")
        try:
            assert d.starts["mariadbd"] == 2 and d.db_port != taken
            assert d.starts["slurmdbd"] >= 2 and d.port != taken
        finally:
            d.stop()
        script = iter([taken])
        _, values = _plan_and_values(CONFIGS["gke-no-accounting"])
        ctl = SlurmController(chroot, values, slurm_key, name="ctld-port-race")
        try:
            assert ctl.starts == 2 and ctl.port != taken
            assert "UP" in ctl.run("scontrol", "ping").stdout
        finally:
            ctl.stop()
    finally:
        holder.close()
    assert handed.count(taken) == 3
