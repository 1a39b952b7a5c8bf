"""Network namespaces for the real Slurm daemons: one private namespace per test session (``Chroot``: slurmctld,
slurmdbd, MariaDB and every client command), and one per real ``slurmd``, so several run on one machine.

A session's namespace is why its daemons are its own: a concurrent run's slurmctld cannot reach our slurmdbd (it
once did through a reused host port, and slurmdbd's log filled with ``decode_jwt`` / ``REQUEST_PERSIST_INIT``
authentication errors until it gave up), and no other process can take a port between choosing and binding it.

Debian's Slurm 26.05 is not built with ``--enable-multiple-slurmd``: a second ``slurmd -N <name>`` on the same
network stack dies with ``fatal: Unable to bind listen port``, and a per-node ``Port=`` is not honoured (``--conf``
refuses ``Port`` and ``NodeName``). In its own namespace each slurmd binds the one ``SlurmdPort`` on its own address.
Layout: a bridge in the session's namespace (``home``) holds the controller's address (``.1``, given to the daemons as
``SlurmctldAddr``); namespace ``i`` gets a veth on the bridge with address ``.(10+i)``. A dynamic node
(``slurmd -Z``) registers from that address, and slurmctld records it as the node's ``NodeAddr``.

Names carry this process's id, so concurrent test sessions never collide; ``close()`` removes everything.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import random
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Callable, TypeVar

T = TypeVar("T")
CLONE_NEWNET = 0x40000000


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=check)


_PROBES = itertools.count()


IFNAME_MAX = 15
"""Linux interface names are at most 15 bytes (IFNAMSIZ 16): a longer one is refused with "Attribute failed policy
validation", which reads like a kernel without bridges."""


def probe_name() -> str:
    """A probe namespace's name, unique per process and call (sessions may start on parallel threads), short enough
    for the ``b``/``v`` interfaces named after it."""
    return f"wp{os.getpid() % 100000}x{next(_PROBES) % 1000}"


def missing_netns_privilege() -> str | None:
    """Why namespaces cannot be made here (needs ``ip`` and CAP_NET_ADMIN), or None."""
    probe = probe_name()
    try:
        out = _ip("netns", "add", probe, check=False)
    except FileNotFoundError:
        return "the `ip` command (iproute2) is missing: the real slurmd cluster puts each slurmd in a network namespace"
    if out.returncode != 0:
        return (
            f"`ip netns add` failed ({out.stderr.strip()}): the real slurmd cluster needs CAP_NET_ADMIN "
            "(root on the host, or a --privileged container)"
        )
    try:  # the bridge and veth drivers too (a kernel without them cannot link the namespaces)
        for args in (
            ["link", "add", f"{probe}b", "type", "bridge"],
            ["link", "add", f"{probe}v", "type", "veth", "peer", "name", "eth0", "netns", probe],
        ):
            made = _ip(*args, check=False)
            if made.returncode != 0:
                return f"`ip {' '.join(args)}` failed ({made.stderr.strip()}): the kernel lacks bridge/veth support"
        return None
    finally:
        _ip("link", "del", f"{probe}v", check=False)
        _ip("link", "del", f"{probe}b", check=False)
        _ip("netns", "del", probe, check=False)


def add_namespace(name: str) -> None:
    """A new network namespace with its loopback up and no route to the host or to any other namespace. It also
    gets a private address on a veth pair whose both ends stay inside (kernels here lack the dummy driver): Slurm
    resolves names with ``AI_ADDRCONFIG``, which finds nothing, ``localhost`` included, where no non-loopback address
    exists (slurmdbd then dies: ``Unable to resolve``)."""
    _ip("netns", "add", name)
    try:
        _ip("-n", name, "link", "set", "lo", "up")
        _ip("-n", name, "link", "add", "session0", "type", "veth", "peer", "name", "session1")
        _ip("-n", name, "addr", "add", "192.168.254.1/32", "dev", "session0")
        _ip("-n", name, "link", "set", "session0", "up")
        _ip("-n", name, "link", "set", "session1", "up")
    except BaseException:
        delete_namespace(name)
        raise


def delete_namespace(name: str) -> None:
    """Kill what still runs inside (it is ours: a daemon or job step a failed run left), then delete it."""
    for pid in _ip("netns", "pids", name, check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    _ip("netns", "del", name, check=False)


def enter_prefix(name: str) -> list[str]:
    """A command prefix running a program in namespace ``name`` (network only: mounts stay the host's)."""
    return ["nsenter", f"--net=/run/netns/{name}"]


def in_namespace(name: str, make: Callable[[], T]) -> T:
    """``make()`` run on a fresh thread that joined namespace ``name``: a socket it creates lives there (a test's
    stand-in server reachable from the daemons), while this thread stays where it was."""
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            with open(f"/run/netns/{name}") as ns:
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.setns(ns.fileno(), CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns into network namespace {name}")
            result.append(make())
        except BaseException as exc:  # noqa: BLE001 (re-raised on the caller's thread)
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]


_LOCK = threading.Lock()  # clusters may start in parallel threads: one subnet choice + bridge at a time
_COUNTER = itertools.count()


def _free_subnet(home: list[str]) -> str:
    """A 10.x.y.0/24 no interface of the namespace uses (``ip -4 addr``)."""
    used = _ip(*home, "-o", "-4", "addr").stdout
    for _ in range(100):
        prefix = f"10.{random.randint(200, 250)}.{random.randint(0, 255)}"
        if f" {prefix}." not in used:
            return prefix
    raise RuntimeError("no free 10.x.y.0/24 subnet for the slurmd namespaces")


@dataclass
class NodeNetwork:
    """``count`` namespaces on one bridge in namespace ``home`` (the session's; None: the host's). ``controller`` is
    the bridge's address; ``exec_prefix(i)`` runs a command inside namespace ``i``."""

    count: int
    home: str | None = None
    tag: str = field(default_factory=lambda: f"wr{os.getpid() % 100000}x{next(_COUNTER) % 100}")
    prefix: str = field(init=False)
    made: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        try:
            home = ["-n", self.home] if self.home else []
            with _LOCK:
                self.prefix = _free_subnet(home)
                _ip(*home, "link", "add", self.bridge, "type", "bridge")
                self.made.append(f"link:{self.bridge}")
                _ip(*home, "addr", "add", f"{self.controller}/24", "dev", self.bridge)
            _ip(*home, "link", "set", self.bridge, "up")
            for i in range(self.count):
                ns, veth = self.namespace(i), f"{self.tag}v{i}"
                _ip("netns", "add", ns)
                self.made.append(f"netns:{ns}")
                _ip(*home, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
                self.made.append(f"link:{veth}")
                _ip(*home, "link", "set", veth, "master", self.bridge, "up")
                _ip("-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", "eth0")
                _ip("-n", ns, "link", "set", "eth0", "up")
                _ip("-n", ns, "link", "set", "lo", "up")
        except BaseException:
            self.close()
            raise

    @property
    def bridge(self) -> str:
        return f"{self.tag}b"

    @property
    def controller(self) -> str:
        return f"{self.prefix}.1"

    def address(self, i: int) -> str:
        return f"{self.prefix}.{10 + i}"

    def namespace(self, i: int) -> str:
        return f"{self.tag}n{i}"

    def exec_prefix(self, i: int) -> list[str]:
        return ["ip", "netns", "exec", self.namespace(i)]

    def close(self) -> None:
        home = ["-n", self.home] if self.home else []
        for item in reversed(self.made):  # deleting a namespace deletes its end of the veth pair, then the home end
            kind, name = item.split(":", 1)
            if kind == "netns":
                delete_namespace(name)  # what still runs inside (a job step orphaned by a failed run) is ours
            else:
                _ip(*home, "link", "del", name, check=False)
        self.made.clear()
