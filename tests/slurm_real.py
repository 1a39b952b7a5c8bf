"""Run real Slurm 26.05 daemons (slurmctld, slurmdbd) and MariaDB in the Debian unstable root that
``scripts/slurm-root.sh`` builds, and talk to them with the real client commands.

Everything runs with ``chroot ROOT`` (the root shares this machine's network, so the daemons listen on free local
ports). Needs root. Outside CI a missing root is a skip with the reason; in CI (``CI=true``) it is a failure.
"""
from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from components.slurm_database import MARIADB_ARGS
from tests.slinky_emulation import Paths, create_node_commands, operator_slurm_conf

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ROOT = Path("/var/tmp/gpu-cluster/slurm-root-sid")
START_TIMEOUT_S = 120  # the CI machine has 2 cores; other suites may share them


def root_path() -> Path:
    return Path(os.environ.get("SLURM_ROOT", DEFAULT_ROOT))


def ensure_root() -> Path:
    """The prepared root, building it when possible; skip (outside CI) or fail (CI) with the reason."""
    root = root_path()
    stamp = root / ".gpu-cluster-ready"
    reason = None
    if not stamp.exists():
        if os.geteuid() != 0:
            reason = f"no Slurm test root at {root}, and building one needs root (run: sudo bash scripts/slurm-root.sh)"
        else:
            out = subprocess.run(["bash", str(PROJECT_ROOT / "scripts" / "slurm-root.sh")], capture_output=True,
                                 text=True, timeout=1800)
            if out.returncode != 0:
                reason = f"scripts/slurm-root.sh failed: {out.stderr.strip()[-800:]}"
    elif os.geteuid() != 0:
        reason = "the real-Slurm tests chroot into the test root, which needs root"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true, so this is a failure, not a skip", pytrace=False)
        pytest.skip(reason)
    return root


def versions(root: Path) -> list[str]:
    return (root / ".gpu-cluster-ready").read_text().splitlines()[1:4]


def user_ids(root: Path, user: str) -> tuple[int, int]:
    """uid and gid of ``user`` in the root's /etc/passwd (Debian creates slurm and mysql with dynamic ids)."""
    for line in (root / "etc" / "passwd").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == user:
            return int(fields[2]), int(fields[3])
    raise AssertionError(f"no user {user} in {root}/etc/passwd")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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

    def __init__(self, chroot: Chroot, slurm_key: bytes, settings: tuple[str, ...] = MARIADB_SETTINGS):
        self.chroot = chroot
        self.dir = Workdir(chroot, "dbd")
        self.port, self.db_port = free_port(), free_port()
        self.password = secrets.token_urlsafe(18)
        self.mariadb = self.dbd = None
        try:
            self._start(slurm_key, settings)
        except BaseException:
            self.stop()
            raise

    def _start(self, slurm_key: bytes, settings: tuple[str, ...]) -> None:
        chroot, d = self.chroot, self.dir
        d.write("etc/slurm.key", slurm_key, 0o600)
        mysql, slurm = user_ids(chroot.root, "mysql"), user_ids(chroot.root, "slurm")
        for sub in ("mysql", "run"):
            (d.host / sub).mkdir()
            os.chown(d.host / sub, *mysql)
        chroot.run(["mariadb-install-db", "--user=mysql", f"--datadir={d.inside}/mysql",
                    "--auth-root-authentication-method=socket", "--skip-test-db"], check=True, timeout=120)
        sock = f"{d.inside}/run/mysqld.sock"  # for the admin client; slurmdbd uses TCP, as in Kubernetes
        self.mariadb = chroot.popen(["mariadbd", "--user=mysql", f"--datadir={d.inside}/mysql", f"--socket={sock}",
                                     f"--port={self.db_port}", "--bind-address=127.0.0.1",
                                     f"--pid-file={d.inside}/run/mysqld.pid", *settings])
        _wait("mariadbd", lambda: chroot.run(["mariadb", f"--socket={sock}", "-e", "select 1"]).returncode == 0,
              self.mariadb)
        chroot.run(["mariadb", f"--socket={sock}", "-e",
                    f"CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '{self.password}'; "
                    "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"], check=True)
        d.write("etc/slurmdbd.conf", "\n".join([
            "DbdHost=localhost", f"DbdPort={self.port}", "SlurmUser=slurm", "AuthType=auth/slurm",
            f"LogFile={d.inside}/slurmdbd.log", f"PidFile={d.inside}/slurmdbd.pid",
            "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1", f"StoragePort={self.db_port}",
            "StorageUser=slurm", f"StoragePass={self.password}", "StorageLoc=slurm_acct_db"]) + "\n", 0o600)
        _own(d.host / "etc", slurm)
        (d.host / "slurmdbd.log").touch()
        os.chown(d.host / "slurmdbd.log", *slurm)
        for attempt in range(1, 4):
            # slurmdbd reads slurmdbd.conf next to SLURM_CONF
            self.dbd = chroot.popen(["slurmdbd", "-D"], conf=f"{d.inside}/etc/slurm.conf")
            try:
                _wait("slurmdbd", lambda: "started" in self.log(), self.dbd, 120)
                return
            except AssertionError as exc:
                # slurmdbd 26.05.5 with libmariadb 11.8 dies on its very first start against a fresh database
                # (error 5027 in _check_mysql_concat_is_sane, then fatal); the next start works. Kubernetes restarts
                # the container the same way. Anything else is a real failure.
                if "5027" not in str(exc) or attempt == 3:
                    raise

    def log(self) -> str:
        path = self.dir.host / "slurmdbd.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        for proc in (self.dbd, self.mariadb):
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.dir.remove()


class SlurmController:
    """slurmctld loading the slurm.conf the Slinky operator would write for ``values``, plus our config files."""

    def __init__(self, chroot: Chroot, values: dict, slurm_key: bytes, dbd: SlurmDbd | None = None):
        self.chroot, self.values = chroot, values
        self.dir = d = Workdir(chroot, f"ctld-{values['clusterName']}")
        self.port = free_port()
        etc = f"{d.inside}/etc"
        self.conf = f"{etc}/slurm.conf"
        paths = Paths(etc=etc, state=f"{d.inside}/state", log=f"{d.inside}/slurmctld.log",
                      pid=f"{d.inside}/slurmctld.pid", spool=f"{d.inside}/spool")
        d.write("etc/slurm.conf", operator_slurm_conf(values, paths, self.port, free_port(),
                                                       dbd.port if dbd else None))
        for name, text in values.get("configFiles", {}).items():
            d.write(f"etc/{name}", text)
        d.write("etc/slurm.key", slurm_key, 0o600)
        d.write("etc/jwt_hs256.key", secrets.token_bytes(32), 0o600)
        (d.host / "state").mkdir()
        _own(d.host, user_ids(chroot.root, "slurm"))
        self.proc = chroot.popen(["slurmctld", "-D", "-f", self.conf], conf=self.conf)
        try:
            _wait("slurmctld", lambda: "UP" in self.run("scontrol", "ping").stdout, self.proc, log=self.log)
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
        if self.proc.poll() is None:
            self.run("scontrol", "shutdown")
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.dir.remove()
