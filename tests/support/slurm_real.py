"""Run real Slurm daemons (slurmctld, slurmdbd; 26.05, the release the pinned Slinky images run) and MariaDB in
the Debian root that ``scripts/slurm-root.sh`` builds, and talk to them with the real client commands.

Everything runs with ``chroot ROOT`` (the root shares this machine's network, so the daemons listen on free local
ports). Needs root with CAP_SYS_ADMIN (mount /proc) and CAP_SYS_CHROOT: checked up front by the script's
``--check``. Outside CI a missing root or privilege is a skip with the reason; in CI (``CI=true``) it is a failure.
"""
from __future__ import annotations

import functools
import os
import random
import re
import secrets
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

import pytest

from components.charts import SLURM_RELEASE
from components.slurm_database import MARIADB_ARGS
from scheduling.slurm_values import client_slurm_conf
from tests.support.slinky_emulation import Paths, create_node_commands, operator_slurm_conf

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT_ROOT / "scripts" / "slurm-root.sh"
START_TIMEOUT_S = 120  # the CI machine has 2 cores; other suites may share them
PORT_ATTEMPTS = 5
"""Starts of a daemon with fresh ports when another process took a port between choosing and binding it."""


@functools.lru_cache(maxsize=None)
def root_path() -> Path:
    """``$SLURM_ROOT``, else the script's versioned default (``slurm-root-<hash of what it builds>``)."""
    if os.environ.get("SLURM_ROOT"):
        return Path(os.environ["SLURM_ROOT"])
    return Path(subprocess.run(["bash", str(SCRIPT), "--path"], capture_output=True, text=True, check=True,
                               timeout=30).stdout.strip())


def missing_privileges() -> str | None:
    """What the build and the tests lack (root, CAP_SYS_ADMIN, CAP_SYS_CHROOT) and how to fix it, or None."""
    out = subprocess.run(["bash", str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60)
    return None if out.returncode == 0 else out.stderr.strip().removeprefix("error: ")


def ensure_root() -> Path:
    """The prepared root, building it when needed; skip (outside CI) or fail (CI) with the reason."""
    root = root_path()
    reason = missing_privileges()  # the tests mount /proc and chroot even when the root is built
    if reason is None:
        out = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=1800)
        if out.returncode != 0:  # idempotent: milliseconds when the root is ready
            reason = f"scripts/slurm-root.sh failed: {out.stderr.strip()[-800:]}"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true, so this is a failure, not a skip", pytrace=False)
        pytest.skip(reason)
    return root


def versions(root: Path) -> list[str]:
    """slurmctld -V, slurmdbd and mariadb-server versions, and the Debian suite, as the build recorded them."""
    return (root / ".gpu-cluster-ready").read_text().splitlines()[1:5]


def release_check(version: str, pinned: str = SLURM_RELEASE) -> tuple[str, str]:
    """``slurmctld -V`` output -> ("same" | "newer" | "older", a sentence for the test output).

    Newer is accepted with a notice: it happens when the Debian mirror no longer carries the pinned release (the
    script then builds with the newest), which the project cannot fix. Older is a failure."""
    found = re.search(r"(\d+)\.(\d+)(?:\.\d+)?", version)
    if found is None:
        return "older", f"cannot read a Slurm release from {version!r}"
    have = (int(found.group(1)), int(found.group(2)))
    want = tuple(int(x) for x in pinned.split("."))
    release = f"{have[0]}.{have[1]:02d}"
    if have == want:
        return "same", f"slurmctld {found.group(0)}: the release the pinned Slinky images run ({pinned})"
    if have > want:
        return "newer", (f"slurmctld {found.group(0)} is NEWER than the pinned Slinky images' {pinned}: the Debian "
                         f"mirror no longer has {pinned}, so the configs were checked by {release}. Options removed "
                         f"or changed after {pinned} may show up here first; this is not a failure")
    return "older", (f"slurmctld {found.group(0)} is OLDER than the pinned Slinky images' {pinned}: it lacks options "
                     "the rendered configs use (rebuild the root: bash scripts/slurm-root.sh)")


def user_ids(root: Path, user: str) -> tuple[int, int]:
    """uid and gid of ``user`` in the root's /etc/passwd (Debian creates slurm and mysql with dynamic ids)."""
    for line in (root / "etc" / "passwd").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == user:
            return int(fields[2]), int(fields[3])
    raise AssertionError(f"no user {user} in {root}/etc/passwd")


_handed_out: set[int] = set()


def free_port() -> int:
    """A local port that is free now and not handed out before by this process, from 20000-32767 (below Linux's
    ephemeral range, so outgoing connections do not take it). Another process may still bind it before the daemon
    does: ``with_free_ports`` starts the daemon again on fresh ports when that happens."""
    for _ in range(200):
        port = random.randint(20000, 32767)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free local port in 20000-32767")


class PortTaken(AssertionError):
    """A daemon exited because its port was taken (``Address already in use``)."""


PORT_IN_USE = re.compile(r"Address already in use|Bind on TCP/IP port|error binding|Error binding", re.I)

T = TypeVar("T")


def with_free_ports(start: Callable[[], T], what: str, attempts: int = PORT_ATTEMPTS) -> T:
    """``start()`` (which picks its ports with ``free_port``), again with fresh ports while it fails with
    ``PortTaken``; any other failure is raised at once."""
    for attempt in range(1, attempts + 1):
        try:
            return start()
        except PortTaken as exc:
            if attempt == attempts:
                raise AssertionError(f"{what}: its port was taken {attempts} times in a row: {exc}") from exc
    raise AssertionError("unreachable")


def _port_taken(exc: AssertionError) -> AssertionError:
    return PortTaken(str(exc)) if PORT_IN_USE.search(str(exc)) else exc


@dataclass
class Chroot:
    root: Path
    mounted_proc: bool = False

    def __post_init__(self) -> None:
        proc = self.root / "proc"
        if subprocess.run(["mountpoint", "-q", str(proc)]).returncode != 0:
            subprocess.run(["mount", "-t", "proc", "proc", str(proc)], check=True)
            self.mounted_proc = True  # slurmctld 26.05 dies without /proc (readlink of its own binary)
        for run_dir in ("slurmctld", "slurmdbd"):  # the daemons' run dirs (systemd's RuntimeDirectory= elsewhere)
            path = self.root / "run" / run_dir
            path.mkdir(parents=True, exist_ok=True)
            os.chown(path, *user_ids(self.root, "slurm"))

    def run(self, args: list[str], conf: str | None = None, timeout: float = 60, check: bool = False,
            input: str | None = None) -> subprocess.CompletedProcess:
        env = ["env", f"SLURM_CONF={conf}"] if conf else []
        return subprocess.run(["chroot", str(self.root), *env, *args], capture_output=True, text=True,
                              timeout=timeout, check=check, input=input)

    def popen(self, args: list[str], conf: str | None = None) -> subprocess.Popen:
        env = ["env", f"SLURM_CONF={conf}"] if conf else []
        return subprocess.Popen(["chroot", str(self.root), *env, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)

    def close(self) -> None:
        """/proc stays mounted: another test session may be using the root right now (scripts/slurm-root.sh
        unmounts it before a rebuild)."""


def _wait(what: str, ok, proc: subprocess.Popen | None = None, timeout: float = START_TIMEOUT_S,
          log=lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode}: {proc.stdout.read()[-2000:]}{log()[-2000:]}")
        time.sleep(0.3)
    raise AssertionError(f"{what} did not come up in {timeout:.0f} s; its log ends:\n{log()[-3000:]}")


def _own(path: Path, ids: tuple[int, int]) -> None:
    for p in [path, *path.rglob("*")]:
        os.chown(p, *ids)


@dataclass
class Workdir:
    """A directory inside the root; ``inside`` is its path as the chrooted daemons see it."""
    chroot: Chroot
    name: str
    host: Path = field(init=False)

    def __post_init__(self) -> None:
        self.host = self.chroot.root / "tmp" / "gpu-cluster-tests" / f"{self.name}-{os.getpid()}"
        shutil.rmtree(self.host, ignore_errors=True)
        self.host.mkdir(parents=True)

    @property
    def inside(self) -> str:
        return "/" + str(self.host.relative_to(self.chroot.root))

    def write(self, rel: str, text: str | bytes, mode: int = 0o644) -> None:
        path = self.host / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        path.chmod(mode)

    def remove(self) -> None:
        shutil.rmtree(self.host, ignore_errors=True)


MARIADB_SETTINGS = MARIADB_ARGS
"""The arguments the deployed MariaDB gets (components/slurm_database.py): slurmdbd logs errors without them."""


class SlurmDbd:
    """MariaDB + slurmdbd, configured as the Slinky Accounting CR would (auth/slurm, StorageType mysql)."""

    def __init__(self, chroot: Chroot, slurm_key: bytes, settings: tuple[str, ...] = MARIADB_SETTINGS,
                 name: str = "dbd"):
        self.chroot = chroot
        self.dir = Workdir(chroot, name)
        self.port = self.db_port = 0
        self.password = secrets.token_urlsafe(18)
        self.mariadb: subprocess.Popen | None = None
        self.dbd: subprocess.Popen | None = None
        self.starts = {"mariadbd": 0, "slurmdbd": 0}
        """Starts per daemon, including those retried because another process took the port."""
        try:
            self._prepare(slurm_key)
            with_free_ports(lambda: self._start_mariadb(settings), "mariadbd")
            self._create_user()
            with_free_ports(self._start_dbd, "slurmdbd")
        except BaseException:
            self.stop()
            raise

    @property
    def _sock(self) -> str:
        return f"{self.dir.inside}/run/mysqld.sock"  # for the admin client; slurmdbd uses TCP, as in Kubernetes

    def _prepare(self, slurm_key: bytes) -> None:
        chroot, d = self.chroot, self.dir
        d.write("etc/slurm.key", slurm_key, 0o600)
        d.write("client/slurm.key", slurm_key, 0o600)  # auth/slurm reads the key next to the client's slurm.conf
        mysql = user_ids(chroot.root, "mysql")
        for sub in ("mysql", "run"):
            (d.host / sub).mkdir()
            os.chown(d.host / sub, *mysql)
        chroot.run(["mariadb-install-db", "--user=mysql", f"--datadir={d.inside}/mysql",
                    "--auth-root-authentication-method=socket", "--skip-test-db"], check=True, timeout=120)

    def _start_mariadb(self, settings: tuple[str, ...]) -> None:
        chroot, d = self.chroot, self.dir
        self.db_port = free_port()
        self.starts["mariadbd"] += 1
        self.mariadb = chroot.popen(["mariadbd", "--user=mysql", f"--datadir={d.inside}/mysql",
                                     f"--socket={self._sock}", f"--port={self.db_port}", "--bind-address=127.0.0.1",
                                     f"--pid-file={d.inside}/run/mysqld.pid", *settings])
        try:
            _wait("mariadbd", lambda: chroot.run(["mariadb", f"--socket={self._sock}", "-e",
                                                  "select 1"]).returncode == 0, self.mariadb)
        except AssertionError as exc:
            _stop(self.mariadb)
            raise _port_taken(exc) from None

    def _create_user(self) -> None:
        self.chroot.run(["mariadb", f"--socket={self._sock}", "-e",
                         f"CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '{self.password}'; "
                         "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"], check=True)

    def _start_dbd(self) -> None:
        chroot, d = self.chroot, self.dir
        self.port = free_port()
        d.write("etc/slurmdbd.conf", "\n".join([
            "DbdHost=localhost", f"DbdPort={self.port}", "SlurmUser=slurm", "AuthType=auth/slurm",
            f"LogFile={d.inside}/slurmdbd.log", f"PidFile={d.inside}/slurmdbd.pid",
            "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1", f"StoragePort={self.db_port}",
            "StorageUser=slurm", f"StoragePass={self.password}", "StorageLoc=slurm_acct_db"]) + "\n", 0o600)
        _own(d.host / "etc", user_ids(chroot.root, "slurm"))
        d.write("client/slurm.conf", client_slurm_conf("probe", "localhost", 1, "localhost", self.port))
        for attempt in range(1, 4):
            log = d.host / "slurmdbd.log"
            log.write_text("")  # this start's lines only
            os.chown(log, *user_ids(chroot.root, "slurm"))
            self.starts["slurmdbd"] += 1
            # slurmdbd reads slurmdbd.conf next to SLURM_CONF
            self.dbd = chroot.popen(["slurmdbd", "-D"], conf=f"{d.inside}/etc/slurm.conf")
            try:
                _wait("slurmdbd", self._answers, self.dbd, 120, log=self.log)
                return
            except AssertionError as exc:
                _stop(self.dbd)
                if PORT_IN_USE.search(str(exc)):
                    raise PortTaken(str(exc)) from None
                # slurmdbd 26.05.5 with libmariadb 11.8 dies on its very first start against a fresh database
                # (error 5027 in _check_mysql_concat_is_sane, then fatal); the next start works. Kubernetes restarts
                # the container the same way. Anything else is a real failure.
                if "5027" not in str(exc) or attempt == 3:
                    raise

    def _answers(self) -> bool:
        """Ready = it answers a client. Its log says "started" just BEFORE it binds its port (a taken port is fatal
        a moment later), so the line alone is no proof; and a client asking earlier would reach whoever holds the
        port, so it asks only after "started" with no bind error, and gives up after a while (then the process
        has exited, which _wait reports)."""
        log = self.log()
        if self.dbd.poll() is not None or "started" not in log or PORT_IN_USE.search(log) or "fatal:" in log:
            return False
        time.sleep(0.2)  # a bind failure follows "started" within milliseconds
        if self.dbd.poll() is not None or PORT_IN_USE.search(self.log()):
            return False
        try:
            return self.chroot.run(["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"],
                                   conf=f"{self.dir.inside}/client/slurm.conf", timeout=20).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def log(self) -> str:
        path = self.dir.host / "slurmdbd.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        for proc in (self.dbd, self.mariadb):
            _stop(proc)
        self.dir.remove()


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


class SlurmController:
    """slurmctld loading the slurm.conf the Slinky operator would write for ``values``, plus our config files."""

    def __init__(self, chroot: Chroot, values: dict, slurm_key: bytes, dbd: SlurmDbd | None = None,
                 name: str | None = None):
        self.chroot, self.values, self.slurm_key, self.dbd = chroot, values, slurm_key, dbd
        self.name = name or f"ctld-{values['clusterName']}"
        self.starts = 0
        """Starts, including those retried because another process took the port."""
        self.proc: subprocess.Popen | None = None
        with_free_ports(self._start, "slurmctld")

    def _start(self) -> None:
        """A fresh directory, config and ports each time: nothing of a start that lost its port survives."""
        chroot, values = self.chroot, self.values
        self.dir = d = Workdir(chroot, self.name)
        self.port = free_port()
        self.starts += 1
        etc = f"{d.inside}/etc"
        self.conf = f"{etc}/slurm.conf"
        paths = Paths(etc=etc, state=f"{d.inside}/state", log=f"{d.inside}/slurmctld.log",
                      pid=f"{d.inside}/slurmctld.pid", spool=f"{d.inside}/spool")
        d.write("etc/slurm.conf", operator_slurm_conf(values, paths, self.port, free_port(),
                                                       self.dbd.port if self.dbd else None))
        for name, text in values.get("configFiles", {}).items():
            d.write(f"etc/{name}", text)
        d.write("etc/slurm.key", self.slurm_key, 0o600)
        d.write("etc/jwt_hs256.key", secrets.token_bytes(32), 0o600)
        (d.host / "state").mkdir()
        _own(d.host, user_ids(chroot.root, "slurm"))
        self.proc = chroot.popen(["slurmctld", "-D", "-f", self.conf], conf=self.conf)
        try:  # ready = it answers scontrol ping (a process that lost its port exits: checked first)
            _wait("slurmctld", lambda: self.proc.poll() is None and not PORT_IN_USE.search(self.log())
                  and "UP" in self.run("scontrol", "ping").stdout, self.proc, log=self.log)
        except AssertionError as exc:
            self.stop()
            raise _port_taken(exc) from None
        except BaseException:
            self.stop()
            raise

    def run(self, *args: str, conf: str | None = None) -> subprocess.CompletedProcess:
        return self.chroot.run(list(args), conf=conf or self.conf)

    def create_nodes(self) -> None:
        for cmd in create_node_commands(self.values):
            out = self.run(*cmd)
            assert out.returncode == 0, f"{' '.join(cmd)}: {out.stdout}{out.stderr}"

    def log(self) -> str:
        path = self.dir.host / "slurmctld.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.run("scontrol", "shutdown")
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.dir.remove()
