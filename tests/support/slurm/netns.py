"""One network namespace per real ``slurmd``, so several run on one machine.

Debian's Slurm 26.05 is not built with ``--enable-multiple-slurmd``: a second ``slurmd -N <name>`` on the same
network stack dies with ``fatal: Unable to bind listen port``, and a per-node ``Port=`` is not honoured (``--conf``
refuses ``Port`` and ``NodeName``). In its own namespace each slurmd binds the one ``SlurmdPort`` on its own address.
Layout: a bridge in the host namespace holds the controller's address (``.1``, given to the daemons as
``SlurmctldAddr``); namespace ``i`` gets a veth on the bridge with address ``.(10+i)``. A dynamic node
(``slurmd -Z``) registers from that address, and slurmctld records it as the node's ``NodeAddr``.

Names carry this process's id, so concurrent test sessions never collide; ``close()`` removes everything.
"""
from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import threading
from dataclasses import dataclass, field


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=check)


def missing_netns_privilege() -> str | None:
    """Why namespaces cannot be made here (needs ``ip`` and CAP_NET_ADMIN), or None."""
    probe = f"wrprobe{os.getpid() % 100000}"
    try:
        out = _ip("netns", "add", probe, check=False)
    except FileNotFoundError:
        return "the `ip` command (iproute2) is missing: the real slurmd cluster puts each slurmd in a network namespace"
    if out.returncode != 0:
        return (f"`ip netns add` failed ({out.stderr.strip()}): the real slurmd cluster needs CAP_NET_ADMIN "
                "(root on the host, or a --privileged container)")
    try:  # the bridge and veth drivers too (a kernel without them cannot link the namespaces)
        for args in (["link", "add", f"{probe}b", "type", "bridge"],
                     ["link", "add", f"{probe}v", "type", "veth", "peer", "name", "eth0", "netns", probe]):
            made = _ip(*args, check=False)
            if made.returncode != 0:
                return f"`ip {' '.join(args)}` failed ({made.stderr.strip()}): the kernel lacks bridge/veth support"
        return None
    finally:
        _ip("link", "del", f"{probe}v", check=False)
        _ip("link", "del", f"{probe}b", check=False)
        _ip("netns", "del", probe, check=False)


_LOCK = threading.Lock()  # clusters may start in parallel threads: one subnet choice + bridge at a time
_COUNTER = itertools.count()


def _free_subnet() -> str:
    """A 10.x.y.0/24 no interface on this machine uses (``ip -4 addr``)."""
    used = _ip("-o", "-4", "addr").stdout
    for _ in range(100):
        prefix = f"10.{random.randint(200, 250)}.{random.randint(0, 255)}"
        if f" {prefix}." not in used:
            return prefix
    raise RuntimeError("no free 10.x.y.0/24 subnet for the slurmd namespaces")


@dataclass
class NodeNetwork:
    """``count`` namespaces on one bridge. ``controller`` is the host-side address; ``exec_prefix(i)`` runs a
    command inside namespace ``i``."""
    count: int
    tag: str = field(default_factory=lambda: f"wr{os.getpid() % 100000}x{next(_COUNTER) % 100}")
    prefix: str = field(init=False)
    made: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        try:
            with _LOCK:
                self.prefix = _free_subnet()
                _ip("link", "add", self.bridge, "type", "bridge")
                self.made.append(f"link:{self.bridge}")
                _ip("addr", "add", f"{self.controller}/24", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")
            for i in range(self.count):
                ns, veth = self.namespace(i), f"{self.tag}v{i}"
                _ip("netns", "add", ns)
                self.made.append(f"netns:{ns}")
                _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
                self.made.append(f"link:{veth}")
                _ip("link", "set", veth, "master", self.bridge, "up")
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
        for item in self.made:  # what is still running inside (a job step orphaned by a failed run): it is ours
            if item.startswith("netns:"):
                for pid in _ip("netns", "pids", item.split(":", 1)[1], check=False).stdout.split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        for item in reversed(self.made):  # deleting a namespace deletes its end of the veth pair, then the host end
            kind, name = item.split(":", 1)
            _ip(*(["netns", "del", name] if kind == "netns" else ["link", "del", name]), check=False)
        self.made.clear()
