"""Every mistake a new user makes on the command line gets an error with the fix (exit 2), never a traceback; and
each documented spelling of a path works."""

from __future__ import annotations

import json
import sys

import pytest

from tests.support.project.documented_commands import PY, run


MISTAKES = [
    # (argv, stderr must contain) -- each exits 2 with the fix, before doing any work
    ([PY, "-m", "preview", "--stack", "Pulumi.dev.yaml"], "fix:      --stack dev"),
    ([PY, "-m", "preview", "--stack", "dev", "--policy-pack", "no-such-pack"], "fix:      --policy-pack policies"),
    ([PY, "-m", "preview", "--stack", "dev", "--fail-on-cost-increase", "10%"], "add --base GIT_REF"),
    ([PY, "-m", "preview", "--stack", "no-such-stack"], "allowed:"),
    (
        [PY, "-m", "whatif", "--stack", "Pulumi.gke-kueue.yaml", "--workload", "workloads/gke-kueue.yaml"],
        "fix:      --stack gke-kueue",
    ),
    (
        [
            PY,
            "-m",
            "whatif",
            "--stack",
            "gke-kueue",
            "--workload",
            "workloads/gke-kueue.yaml",
            "--chart",
            "no-such-folder/out.png",
        ],
        "mkdir -p no-such-folder",
    ),
    # the interpreter without site-packages: what a bare `python -m preview` outside the venv sees
    ([sys.executable, "-S", "-m", "preview", "--stack", "dev"], ".venv/bin/python -m preview --stack dev"),
    (
        [sys.executable, "-S", "-m", "whatif", "--stack", "gke-kueue", "--workload", "workloads/gke-kueue.yaml"],
        ".venv/bin/python -m whatif --stack gke-kueue",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("argv, hint", MISTAKES, ids=lambda v: " ".join(v[2:5]) if isinstance(v, list) else "")
def test_a_mistake_gets_the_fix_and_exit_2(argv, hint):
    proc = run(argv)
    assert (proc.returncode, "Traceback" in proc.stderr) == (2, False), proc.stderr[-2000:]
    assert hint in proc.stderr
    assert proc.stdout == ""


@pytest.mark.slow
def test_a_relative_policy_pack_path_boots_the_pack_from_any_spelling():
    """`--policy-pack ./policies` and `policies` (as documented) used to exit 4: the pack's interpreter path was
    resolved against the pack's folder."""
    for spelling in ("./policies", "policies"):
        proc = run([PY, "-m", "preview", "--stack", "gke-a3-spread", "--policy-pack", spelling, "--format", "json"])
        assert proc.returncode == 1, proc.stderr  # the pack ran and refused the stack, as the README says
        assert any(v["enforcement"] == "mandatory" for v in json.loads(proc.stdout)["violations"])
