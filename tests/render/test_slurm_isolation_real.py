"""Two real-Slurm sessions started at the same time, as two concurrent test runs on one machine start theirs: each
owns what it talks to. A session's slurmctld, slurmdbd and MariaDB run in its own network namespace
(``Chroot.netns``) with its own auth/slurm key, so the other session's daemons can neither reach them nor, if they
did, authenticate. Before, both shared the host network on random ports, and one run's slurmctld reached another
run's slurmdbd (its log full of ``decode_jwt`` / ``REQUEST_PERSIST_INIT`` authentication errors, the test failing
with "slurmdbd did not come up").
"""

from __future__ import annotations

import os
import secrets
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterator

import pytest

from render.slurm_values import client_slurm_conf
from tests.render.test_slurm_real import _plan_and_values
from tests.support.slurm.configs import SYNTHETIC
from tests.support.slurm.netns import enter_prefix
from tests.support.slurm.real import SlurmController, SlurmDbd, Workdir, _wait
from tests.support.slurm.root import Chroot, ensure_root

pytestmark = pytest.mark.real_slurm


@dataclass
class Session:
    name: str
    chroot: Chroot
    key: bytes
    dbd: SlurmDbd
    ctl: SlurmController
    client: Workdir

    def sacctmgr(self, *args: str) -> tuple[int, str]:
        """``sacctmgr -n -P ARGS`` against this session's slurmdbd, from inside its namespace and run directories."""
        out = self.chroot.run(["sacctmgr", "-n", "-P", *args], conf=f"{self.client.inside}/etc/slurm.conf", timeout=60)
        return out.returncode, out.stdout + out.stderr

    def registered(self) -> bool:
        """slurmdbd knows this cluster's slurmctld (registration sets the cluster's control port)."""
        rc, shown = self.sacctmgr("show", "cluster", "format=cluster,controlport")
        return rc == 0 and f"{self.name}|{self.ctl.port}" in shown.splitlines()

    def stop(self) -> None:
        for part in (self.ctl.stop, self.dbd.stop, self.client.remove, self.chroot.close):
            part()


def _start(root: object, name: str, values: dict) -> Session:
    chroot, key = Chroot(root), secrets.token_bytes(1024)  # type: ignore[arg-type]
    dbd = ctl = None
    try:
        dbd = SlurmDbd(chroot, key, name=f"dbd-iso-{name}")
        client = Workdir(chroot, f"client-iso-{name}")
        client.write("etc/slurm.conf", client_slurm_conf(name, "localhost", 1, "localhost", dbd.port))
        client.write("etc/slurm.key", key, 0o600)
        session = Session(name, chroot, key, dbd, None, client)  # type: ignore[arg-type]
        rc, out = session.sacctmgr("-i", "add", "cluster", name)
        assert rc == 0, out
        ctl = session.ctl = SlurmController(chroot, {**values, "clusterName": name}, key, dbd, name=f"ctld-iso-{name}")
        client.write("etc/slurm.conf", client_slurm_conf(name, "localhost", ctl.port, "localhost", dbd.port))
        _wait(
            f"slurmctld of {name} registered with its slurmdbd (sacctmgr shows its control port)",
            session.registered,
            log=ctl.log,
        )
        return session
    except BaseException:
        for part in (ctl, dbd):
            if part is not None:
                part.stop()
        chroot.close()
        raise


def _values() -> dict:
    """The Helm values of a small Slurm stack (the daemons' configuration; the cluster name is each session's)."""
    return _plan_and_values(SYNTHETIC["eks-zones"])[1]


@pytest.fixture(scope="module")
def sessions() -> Iterator[tuple[Session, Session]]:
    root = ensure_root()
    values = _values()  # the program runs on the main thread (Pulumi's runtime wants its event loop)
    with ThreadPoolExecutor(2) as pool:  # both start at the same time, as two concurrent test runs do
        started = [pool.submit(_start, root, name, values) for name in ("alpha", "beta")]
        done = []
        try:
            for future in started:
                done.append(future.result())
        finally:
            if len(done) < 2:
                for future in started:
                    if future.exception() is None:
                        future.result().stop()
    yield done[0], done[1]
    for session in done:
        session.stop()


def _netns(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/net")


def test_each_sessions_daemons_run_in_its_own_network_namespace(sessions):
    alpha, beta = sessions
    host = _netns(os.getpid())
    for s in sessions:
        daemons = {_netns(p.pid) for p in (s.ctl.proc, s.dbd.dbd, s.dbd.mariadb)}
        assert len(daemons) == 1 and host not in daemons, (s.name, daemons, host)
    assert _netns(alpha.ctl.proc.pid) != _netns(beta.ctl.proc.pid)


def test_each_slurmdbd_lists_only_its_own_cluster(sessions):
    for s in sessions:
        rc, shown = s.sacctmgr("show", "cluster", "format=cluster")
        assert rc == 0 and shown.split() == [s.name], shown
        assert f"ClusterName={s.name}" in s.ctl.run("scontrol", "show", "config").stdout.replace(" ", "")


def test_nothing_in_another_session_reaches_our_slurmdbd_even_with_our_key(sessions):
    """From beta's namespace, alpha's slurmdbd port is nobody (a slurmctld or client there connects to its own
    namespace's loopback): even with alpha's key and cluster name, the connection is refused, and alpha's slurmdbd
    never hears of it (no stranger's failed authentication in its log)."""
    alpha, beta = sessions
    stray = Workdir(beta.chroot, "client-iso-stray")
    try:
        stray.write(
            "etc/slurm.conf", client_slurm_conf("alpha", "localhost", alpha.ctl.port, "localhost", alpha.dbd.port)
        )
        stray.write("etc/slurm.key", alpha.key, 0o600)
        out = beta.chroot.run(
            ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"],
            conf=f"{stray.inside}/etc/slurm.conf",
            timeout=120,
        )
        assert out.returncode != 0 and "alpha" not in out.stdout.split(), out.stdout + out.stderr
        assert "UP" not in beta.chroot.run(["scontrol", "ping"], conf=f"{stray.inside}/etc/slurm.conf").stdout
        rc, shown = alpha.sacctmgr("show", "cluster", "format=cluster")
        assert rc == 0 and shown.split() == ["alpha"], shown
        assert not any(word in alpha.dbd.log() for word in ("authentication error", "decode_jwt")), alpha.dbd.log()[
            -2000:
        ]
    finally:
        stray.remove()


def test_a_client_signed_by_another_sessions_daemons_is_refused_by_our_slurmdbd(sessions):
    """Clients get their auth/slurm credential from a daemon's ``/run/<daemon>/sack.socket``. Each session has its own
    run directories and its own key: a client inside alpha's namespace that asks beta's socket (what every client
    did when the root's /run was shared) carries a credential alpha's slurmdbd refuses, the failure concurrent runs
    used to see (``decode_jwt``, ``REQUEST_PERSIST_INIT has authentication error``)."""
    alpha, beta = sessions
    conf = f"{alpha.client.inside}/etc/slurm.conf"
    wrong = subprocess.run(
        [
            *enter_prefix(alpha.chroot.netns),
            *beta.chroot.run_prefix(),
            "chroot",
            str(alpha.chroot.root),
            "env",
            f"SLURM_CONF={conf}",
            "sacctmgr",
            "-n",
            "-P",
            "show",
            "cluster",
            "format=cluster",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert wrong.returncode != 0 and "alpha" not in wrong.stdout.split(), wrong.stdout + wrong.stderr
    assert "authentication error" in alpha.dbd.log()
    rc, shown = alpha.sacctmgr("show", "cluster", "format=cluster")
    assert rc == 0 and shown.split() == ["alpha"], shown
