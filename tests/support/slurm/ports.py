"""Local ports for the real Slurm daemons, which share this machine's network: a free one now, and a start again on
fresh ports when another process took the port between choosing and binding it."""

from __future__ import annotations

import random
import re
import socket
from typing import Callable, TypeVar

PORT_ATTEMPTS = 5
"""Starts of a daemon with fresh ports when another process took a port between choosing and binding it."""

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


def port_taken(exc: AssertionError) -> AssertionError:
    """``exc`` as ``PortTaken`` when its text says the port was in use, else unchanged."""
    return PortTaken(str(exc)) if PORT_IN_USE.search(str(exc)) else exc
