"""`python -m whatif` runs with the cyclic garbage collector off (a command whose objects live until it exits, as
`python -m preview`); code calling ``main()`` in-process keeps its collector. The probe records the collector's state
inside the simulation itself, so a run that never simulated cannot pass."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

import whatif.__main__ as cli
import whatif.engine as engine

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--stack", "gke-kueue", "--workload", "workloads/gke-kueue.yaml", "--format", "json", "--horizon-hours", "2"]
PROBE = """
import gc, json, runpy, sys
import whatif.engine as engine
seen = []
real = engine.Engine.run
def watching(self):
    seen.append(gc.isenabled())
    return real(self)
engine.Engine.run = watching
sys.argv = ["whatif", *sys.argv[1:]]
try:
    runpy.run_module("whatif", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    print(json.dumps({"code": exc.code, "seen": seen}), file=sys.stderr)
"""


@pytest.mark.slow
def test_the_command_simulates_with_the_collector_off():
    proc = subprocess.run([sys.executable, "-c", PROBE, *ARGS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] == 0 and json.loads(proc.stdout)["stack"]
    assert report["seen"] == [False]  # one simulation, collector off


def test_main_called_in_process_keeps_the_collector(monkeypatch, capsys):
    seen: list[bool] = []
    real = engine.Engine.run

    def watching(self):
        seen.append(gc.isenabled())
        return real(self)

    monkeypatch.setattr(engine.Engine, "run", watching)
    monkeypatch.chdir(ROOT)
    assert gc.isenabled()
    assert cli.main(ARGS) == 0
    assert seen == [True] and gc.isenabled()
    assert json.loads(capsys.readouterr().out)["stack"]
