"""Run real Slurm daemons (slurmctld, slurmdbd; 26.05, the release the pinned Slinky images run) and MariaDB in
the Debian root that ``scripts/slurm-root.sh`` builds (``tests/support/slurm/root.py``), and talk to them with the
real client commands.

Everything runs with ``chroot ROOT`` inside the session's own network namespace (``Chroot.netns``): no other test
run can reach these daemons or take their ports. Every wait is on a condition (a client's answer, a log line), with
one generous deadline that names the condition when it fails, never on a fixed pause a loaded machine stretches.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from components.slurm.database import MARIADB_ARGS
from stacks.plan.slurm_scaling import SCRIPT_DIR
from render.slurm_values import client_slurm_conf
from tests.support.slurm import ports
from tests.support.slurm.slinky_emulation import Paths, create_node_commands, operator_slurm_conf
from tests.support.slurm.ports import PORT_IN_USE, PortTaken, port_taken, with_free_ports
from tests.support.slurm.root import Chroot, user_ids

START_TIMEOUT_S = 300
"""How long a start-up condition may take: generous, as a 2-core runner at load 9 stretches every start; a condition
that holds returns at once, so the deadline only bounds a real failure."""
STOP_TIMEOUT_S = 60
"""How long jobs may take to end after ``scancel`` before the controller is shut down anyway."""


def _wait(
    what: str,
    ok: Callable[[], bool],
    proc: subprocess.Popen | None = None,
    timeout: float = START_TIMEOUT_S,
    log: Callable[[], str] = lambda: "",
) -> None:
    """Poll ``ok()`` until it holds; fail naming ``what`` when ``proc`` exits or the deadline passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode}: {proc.stdout.read()[-2000:]}{log()[-2000:]}")
        time.sleep(0.3)  # the polling interval, not a wait for anything
    raise AssertionError(f"waited {timeout:.0f} s for: {what}; not seen. The log ends:\n{log()[-3000:]}")


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
"""The arguments the deployed MariaDB gets (components/slurm/database.py): slurmdbd logs errors without them."""


class SlurmDbd:
    """MariaDB + slurmdbd, configured as the Slinky Accounting CR would (auth/slurm, StorageType mysql)."""

    def __init__(
        self, chroot: Chroot, slurm_key: bytes, settings: tuple[str, ...] = MARIADB_SETTINGS, name: str = "dbd"
    ):
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
        # One bootstrap at a time in the shared root: two at once (two sessions, or two threads of one) fail with
        # "Unknown table 'mysql.tmp_user_sys'" (its bootstrap's scratch table collides); the datadirs stay separate
        with open(chroot.root / "tmp" / "gpu-cluster-install-db.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = self._install_db(d)
        # Its own words, not only its exit code: a failed bootstrap is otherwise a bare CalledProcessError
        assert done.returncode == 0, f"mariadb-install-db exited {done.returncode}:\n{done.stdout}\n{done.stderr}"

    def _install_db(self, d: Workdir) -> subprocess.CompletedProcess:
        return self.chroot.run(
            [
                "mariadb-install-db",
                "--user=mysql",
                f"--datadir={d.inside}/mysql",
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
            ],
            timeout=120,
        )

    def _start_mariadb(self, settings: tuple[str, ...]) -> None:
        chroot, d = self.chroot, self.dir
        self.db_port = ports.free_port()
        self.starts["mariadbd"] += 1
        self.mariadb = chroot.popen(
            [
                "mariadbd",
                "--user=mysql",
                f"--datadir={d.inside}/mysql",
                f"--socket={self._sock}",
                f"--port={self.db_port}",
                "--bind-address=127.0.0.1",
                f"--pid-file={d.inside}/run/mysqld.pid",
                *settings,
            ]
        )
        try:
            _wait(
                "mariadbd answers a query on its socket",
                lambda: chroot.run(["mariadb", f"--socket={self._sock}", "-e", "select 1"]).returncode == 0,
                self.mariadb,
            )
        except AssertionError as exc:
            _stop(self.mariadb)
            raise port_taken(exc) from None

    def _create_user(self) -> None:
        self.chroot.run(
            [
                "mariadb",
                f"--socket={self._sock}",
                "-e",
                f"CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '{self.password}'; "
                "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';",
            ],
            check=True,
        )

    def _start_dbd(self) -> None:
        chroot, d = self.chroot, self.dir
        self.port = ports.free_port()
        d.write(
            "etc/slurmdbd.conf",
            "\n".join(
                [
                    "DbdHost=localhost",
                    f"DbdPort={self.port}",
                    "SlurmUser=slurm",
                    "AuthType=auth/slurm",
                    f"LogFile={d.inside}/slurmdbd.log",
                    f"PidFile={d.inside}/slurmdbd.pid",
                    "StorageType=accounting_storage/mysql",
                    "StorageHost=127.0.0.1",
                    f"StoragePort={self.db_port}",
                    "StorageUser=slurm",
                    f"StoragePass={self.password}",
                    "StorageLoc=slurm_acct_db",
                ]
            )
            + "\n",
            0o600,
        )
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
                _wait("slurmdbd answers sacctmgr", self._answers, self.dbd, log=self.log)
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
        """Ready = it answers a client. Its log says "started" just BEFORE it binds its port, so the line alone is
        no proof: the client's answer is. Only our daemons listen in the session's namespace, so whatever answers
        on the port is this slurmdbd."""
        log = self.log()
        if self.dbd.poll() is not None or "started" not in log or PORT_IN_USE.search(log) or "fatal:" in log:
            return False
        try:
            return (
                self.chroot.run(
                    ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"],
                    conf=f"{self.dir.inside}/client/slurm.conf",
                    timeout=20,
                ).returncode
                == 0
            )
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

    def __init__(
        self,
        chroot: Chroot,
        values: dict,
        slurm_key: bytes,
        dbd: SlurmDbd | None = None,
        name: str | None = None,
        extra_conf: Callable[[str], str] | None = None,
        programs: dict[str, str] | None = None,
    ):
        """``extra_conf(workdir as the daemons see it)``: lines appended to slurm.conf (real slurmd daemons need
        their log, pid and spool paths, ``tests/support/slurm/cluster.py``). ``programs``: the real Resume/Suspend
        programs (``{"slurm-resume": text, ...}``), run after the recorder notes the call, their exit status going to
        ``programs/exits.log``; without them the recorders alone stand in."""
        self.chroot, self.values, self.slurm_key, self.dbd = chroot, values, slurm_key, dbd
        self.extra_conf, self.programs = extra_conf, programs or {}
        self.name = name or f"ctld-{values['clusterName']}"
        self.starts = 0
        """Starts, including those retried because another process took the port."""
        self.proc: subprocess.Popen | None = None
        with_free_ports(self._start, "slurmctld")

    def _start(self) -> None:
        """A fresh directory, config and ports each time: nothing of a start that lost its port survives."""
        chroot, values = self.chroot, self.values
        self.dir = d = Workdir(chroot, self.name)
        self.port = ports.free_port()
        self.starts += 1
        etc = f"{d.inside}/etc"
        self.conf = f"{etc}/slurm.conf"
        paths = Paths(
            etc=etc,
            state=f"{d.inside}/state",
            log=f"{d.inside}/slurmctld.log",
            pid=f"{d.inside}/slurmctld.pid",
            spool=f"{d.inside}/spool",
        )
        conf = operator_slurm_conf(values, paths, self.port, ports.free_port(), self.dbd.port if self.dbd else None)
        # Resume/SuspendProgram (scaling pools): recorders in the work dir stand in for the rendered programs, which
        # call the Kubernetes API; each call appends "<program> <hostlist>" to programs/calls.log.
        conf = conf.replace(SCRIPT_DIR, f"{d.inside}/programs")
        for program in ("slurm-resume", "slurm-suspend"):
            record = f'#!/bin/sh\necho "$(basename "$0") $* $(date +%s.%N)" >> {d.inside}/programs/calls.log\n'
            if program in self.programs:
                d.write(f"programs/real/{program}", self.programs[program], 0o755)
                record += (
                    f'{d.inside}/programs/real/{program} "$@"; rc=$?\n'
                    f'echo "{program} $rc" >> {d.inside}/programs/exits.log\nexit $rc\n'
                )
            d.write(f"programs/{program}", record, 0o755)
        d.write("programs/calls.log", "", 0o666)
        d.write("programs/exits.log", "", 0o666)
        if self.extra_conf:  # a harness line replaces the operator's line for the same key (no duplicate keys)
            extra = self.extra_conf(d.inside)
            keys = {ln.split("=", 1)[0] for ln in extra.splitlines() if "=" in ln and not ln.startswith("#")}
            conf = "".join(f"{ln}\n" for ln in conf.splitlines() if ln.split("=", 1)[0] not in keys) + extra
        d.write("etc/slurm.conf", conf)
        for name, text in values.get("configFiles", {}).items():
            d.write(f"etc/{name}", text)
        d.write("etc/slurm.key", self.slurm_key, 0o600)
        d.write("etc/jwt_hs256.key", secrets.token_bytes(32), 0o600)
        (d.host / "state").mkdir()
        _own(d.host, user_ids(chroot.root, "slurm"))
        self.proc = chroot.popen(["slurmctld", "-D", "-f", self.conf], conf=self.conf)
        try:  # ready = it answers scontrol ping (a process that lost its port exits: checked first)
            _wait(
                "slurmctld answers scontrol ping",
                lambda: (
                    self.proc.poll() is None
                    and not PORT_IN_USE.search(self.log())
                    and "UP" in self.run("scontrol", "ping").stdout
                ),
                self.proc,
                log=self.log,
            )
        except AssertionError as exc:
            self.stop()
            raise port_taken(exc) from None
        except BaseException:
            self.stop()
            raise

    def run(self, *args: str, conf: str | None = None) -> subprocess.CompletedProcess:
        return self.chroot.run(list(args), conf=conf or self.conf)

    def create_nodes(self) -> None:
        for cmd in create_node_commands(self.values):
            out = self.run(*cmd)
            assert out.returncode == 0, f"{' '.join(cmd)}: {out.stdout}{out.stderr}"

    def run_script(self, name: str, script: str) -> None:
        """A rendered shell script (e.g. the Job creating the scaling pools' CLOUD records), run against this
        controller with the real client commands."""
        self.dir.write(f"scripts/{name}", script, 0o755)
        out = self.run("/bin/sh", f"{self.dir.inside}/scripts/{name}")
        assert out.returncode == 0, f"{name}: {out.stdout}{out.stderr}"

    def program_calls(self) -> list[str]:
        """Resume/SuspendProgram calls so far, in order: ``slurm-resume l4-[0-1] <epoch seconds>``."""
        return (self.dir.host / "programs" / "calls.log").read_text().splitlines()

    def program_exits(self) -> list[str]:
        """Exit statuses of the real programs (``programs=``), in order: ``slurm-resume 0``."""
        return (self.dir.host / "programs" / "exits.log").read_text().splitlines()

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
