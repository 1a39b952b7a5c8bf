"""Every command the docs show, run as a new user would (a fresh process from the project folder), with what the
docs say it prints (the mistakes a new user makes: ``test_cli_mistakes.py``).

A command in a fenced ``bash`` block of README.md, docs/*.md or policies/RULES.md, or in the comments of the stack
files and PulumiPolicy.yaml, is either run here (``RUNS``: its placeholders filled in) or listed in ``NOT_RUN`` with
the reason; a new command in the docs fails ``test_every_documented_command_is_run_or_excused`` until it is one or
the other.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT
from tests.support.project.documented_commands import PY, documented_commands, run, stack_comment_commands


@dataclass(frozen=True)
class Run:
    """A documented command, the argv that runs it here, and what the docs promise."""

    documented: str
    argv: tuple[str, ...]
    exit: int
    prints: tuple[str, ...] = ()
    """Substrings of stdout the docs show."""
    json: bool = False
    """stdout is strict JSON."""
    stderr_has: tuple[str, ...] = field(default=())


def _rules_example_config(tmp: Path) -> Path:
    """The pack config RULES.md shows, as a file."""
    text = (PROJECT_ROOT / "policies" / "RULES.md").read_text(encoding="utf-8")
    block = re.search(r"^```json\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert block is not None
    path = tmp / "org-policy.json"
    path.write_text(block.group(1), encoding="utf-8")
    return path


def _whatif_h100_tables() -> tuple[str, ...]:
    """The result tables docs/whatif.md shows for its gke-h100-512 command."""
    text = (PROJECT_ROOT / "docs" / "whatif.md").read_text(encoding="utf-8")
    start = text.index("9592 jobs (profile)")
    return tuple(
        line
        for line in text[start : text.index("Preemptions and spot", start)].splitlines()
        if line.startswith("| ") and not line.startswith("|---")
    )


RUNS = [
    Run(
        "bash scripts/preview.sh dev",
        ("bash", "scripts/preview.sh", "dev", "--color", "never"),
        0,
        ("Cost (catalog list prices, USD)", "· exit 0"),
    ),
    Run(
        "bash scripts/preview.sh NAME [flags]",
        ("bash", "scripts/preview.sh", "eks-over-budget", "--color", "never"),
        1,
        ("cost-stack-budget", "· exit 1"),
    ),
    Run(
        "bash scripts/preview.sh gke-h100-512 --format markdown",
        ("bash", "scripts/preview.sh", "gke-h100-512", "--format", "markdown"),
        0,
        ("| pool |",),
    ),
    Run(
        f"{PY} -m preview --stack dev [--format text|json|markdown|sarif] [--color auto|always|never]",
        (PY, "-m", "preview", "--stack", "dev", "--format", "json", "--color", "always"),
        0,
        ('"stack": "dev"',),
        json=True,
    ),
    Run(
        f"{PY} -m preview --stack NAME [--format text|json|markdown|sarif] [--stack-file PATH]",
        (PY, "-m", "preview", "--stack", "dev", "--format", "sarif", "--stack-file", "Pulumi.dev.yaml"),
        0,
        ('"runs"',),
        json=True,
    ),
    Run(
        f"{PY} -m preview --stack prod --format sarif > results.sarif",
        (PY, "-m", "preview", "--stack", "gke-a3-spread", "--format", "sarif"),
        1,
        ('"results"',),
        json=True,
    ),
    Run(
        f"{PY} -m preview --stack NAME [--policy-pack-config FILE]",
        (PY, "-m", "preview", "--stack", "dev", "--policy-pack", "policies", "--color", "never"),
        0,
        ("· exit 0",),
    ),
    Run(
        f"{PY} -m preview --stack NAME --base GIT_REF [--format text|json|markdown] [--fail-on-cost-increase 250|10%]",
        (PY, "-m", "preview", "--stack", "dev", "--base", "HEAD", "--format", "json", "--fail-on-cost-increase", "10%"),
        0,
        ('"exitCode": 0',),
        json=True,
    ),
    Run(
        f"{PY} -m preview --stack NAME --base-file OLD/Pulumi.NAME.yaml",
        (PY, "-m", "preview", "--stack", "dev", "--base-file", "Pulumi.dev.yaml", "--color", "never"),
        0,
    ),
    Run(
        f"{PY} -m whatif --stack gke-kueue --workload workloads/gke-kueue.yaml",
        (PY, "-m", "whatif", "--stack", "gke-kueue", "--workload", "workloads/gke-kueue.yaml", "--color", "never"),
        0,
        ("What-if: stack gke-kueue (kueue)",),
    ),
    Run(
        f"{PY} -m whatif --stack gke-kueue --workload workloads/gke-kueue.yaml --vs gke-kueue --seed 7",
        (
            PY,
            "-m",
            "whatif",
            "--stack",
            "gke-kueue",
            "--workload",
            "workloads/gke-kueue.yaml",
            "--vs",
            "gke-kueue",
            "--seed",
            "7",
            "--color",
            "never",
        ),
        0,
        ("Compared: gke-kueue → gke-kueue",),
    ),
    Run(
        f"{PY} -m whatif --stack gke-kueue --workload workloads/gke-kueue.yaml [--format json] "
        "[--vs STACK-WITH-THE-SAME-QUEUES]",
        (
            PY,
            "-m",
            "whatif",
            "--stack",
            "gke-kueue",
            "--workload",
            "workloads/gke-kueue.yaml",
            "--format",
            "json",
            "--vs",
            "eks-kueue",
        ),
        2,
        stderr_has=("--vs eks-kueue: the workload", "no queue 'research' in stack eks-kueue"),
    ),
    Run(
        f"{PY} -m whatif.serving --stack gke-serving --workload workloads/serving/gke-serving.yaml [--format json]",
        (PY, "-m", "whatif.serving", "--stack", "gke-serving", "--workload", "workloads/serving/gke-serving.yaml"),
        0,
        ("Does serving hold its SLO while the cluster runs at ≥ 80 % utilization? yes",),
    ),
    Run(
        f"{PY} -m preview job-objects --stack gke-a4x-nvl72 --job llama-70b [--pool gb200] [--queue pretraining] "
        "[--nodes 18]",
        (
            PY,
            "-m",
            "preview",
            "job-objects",
            "--stack",
            "gke-a4x-nvl72",
            "--job",
            "llama-70b",
            "--pool",
            "gb200",
            "--queue",
            "pretraining",
            "--nodes",
            "18",
        ),
        0,
        ("kind: ComputeDomain", "name: llama-70b-imex", "kind: TrainingRuntime", "kind: TrainJob", "numNodes: 18"),
    ),
    Run(
        "python -m preview --stack fleet",
        (PY, "-m", "preview", "--stack", "fleet", "--color", "never"),
        0,
        ("Fleet (MultiKueue", "fleet-gke", "fleet-eks", "· exit 0"),
    ),
    Run(
        "python -m preview --stack fleet-gke --with gke-kueue",
        (PY, "-m", "preview", "--stack", "fleet-gke", "--with", "gke-kueue", "--color", "never"),
        0,
        ("· exit 0",),
    ),
    Run(
        "python -m whatif --stack fleet --workload workloads/fleet.yaml --vs gke",
        (
            PY,
            "-m",
            "whatif",
            "--stack",
            "fleet",
            "--workload",
            "workloads/fleet.yaml",
            "--vs",
            "gke",
            "--color",
            "never",
        ),
        0,
        ("Fleet: MultiKueue AllAtOnce over gke, eks", "Compared: fleet → fleet-gke"),
    ),
    Run(
        "python -m whatif --stack fleet --workload workloads/fleet.yaml [--vs gke]",
        (PY, "-m", "whatif", "--stack", "fleet", "--workload", "workloads/fleet.yaml", "--format", "json"),
        0,
        ('"fleet"',),
        json=True,
    ),
]
"""The exit code of each is the documented one (README "Exit codes"; the example table names the stacks refused by
the pack). ``--policy-pack-config`` commands run in ``test_the_documented_pack_config_runs_as_documented``."""

SLOW_RUNS = [
    Run(
        f"{PY} -m whatif --stack gke-h100-512 --workload workloads/gke-h100-512.yaml --format markdown "
        "--chart docs/img/whatif-gke-h100-512.png",
        (
            PY,
            "-m",
            "whatif",
            "--stack",
            "gke-h100-512",
            "--workload",
            "workloads/gke-h100-512.yaml",
            "--format",
            "markdown",
            "--chart",
            "{tmp}/chart.png",
        ),
        0,
        _whatif_h100_tables(),
    ),
]

CONFIG_RUNS = {
    f"{PY} -m preview --stack prod --policy-pack-config org-policy.json",
    f"{PY} -m preview --stack NAME --policy-pack-config org-policy.json",
}

NOT_RUN = {
    "python -m whatif --stack gke-kueue --workload workloads/gke-kueue.yaml --seed N": "run above with --seed 7 (the --vs run); tests/whatif/kueue/test_kueue_preemption_loops.py pins each seed's figures",
    "pulumi preview --stack prod --policy-pack policies --policy-pack-config org-policy.json": "the Pulumi CLI is not installed here; the offline preview boots the same pack the same way",
    "pulumi preview --policy-pack policies --policy-pack-config org-policy.json": "the Pulumi CLI (as above)",
    "pulumi preview --policy-pack policies [--policy-pack-config org-policy.json]": "the Pulumi CLI (as above)",
    "bash scripts/test.sh": "the test suite itself",
    "bash scripts/test.sh -q tests/policies": "the test suite itself",
    f"{PY} -m pytest -q tests/preview/diff": "the test suite itself",
    f"sudo {PY} -m pytest -q -s tests/whatif/slurm/test_whatif_real_slurm.py": "the test suite itself (real Slurm)",
    "sudo bash scripts/slurm-root.sh": "builds a Debian root as root (tests/support/slurm/root.py uses it)",
    "bash scripts/slurm-root.sh --check": "root and capabilities (tests/support/slurm/root.py runs it)",
    f"{PY} bench/preview_bench.py [--runs 3] [--pools 50,100,200,400] [--pack-subprocess]": "a benchmark: never timed in tests",
    f"{PY} bench/policy_bench.py [--runs 3] [--pools 200]": "a benchmark: never timed in tests",
    f"{PY} bench/whatif_bench.py [--runs 3] [--baseline REF] [--no-bytecode-cache]": "a benchmark: never timed in tests (tests/project/test_bench_baseline.py checks its untimed parts)",
    "bash scripts/test.sh -q": "the test suite itself",
    "bash scripts/test.sh --quick": "the unit part of the test suite itself (its selection: tests/project/test_quick_loop.py)",
    "bash scripts/test.sh --quick tests/stacks": "the quick loop narrowed to a folder",
    f"{PY} -m pytest -m real_slurm": "the real-Slurm part of the test suite itself",
    f"{PY} -m ruff format --check . && {PY} -m ruff check . && {PY} -m mypy": (
        "run by tests/project/test_format.py, test_lint.py and test_typecheck.py"
    ),
    "bash scripts/venv.sh": "builds .venv: scripts/test.sh runs it (with requirements-dev.txt) before every suite",
    "bash scripts/venv.sh requirements-dev.txt": "builds .venv: scripts/test.sh runs it before every suite",
    "bash scripts/venv.sh requirements.txt": "builds .venv: scripts/preview.sh runs it before every preview",
    "bash scripts/fetch-upstream.sh": "downloads from GitHub, which is not reachable here",
    f"{PY} -m preview --stack dev --color never": "run by tests/project/test_docs.py, which compares its output "
    "with README.md and docs/offline-preview.md",
    f"{PY} -m stacks.spec.docs --write": "rewrites docs/configuration.md; a test checks that it is current",
    "python -m policies.docs --write": "rewrites policies/RULES.md; a test checks that it is current",
    "python -m catalog refresh": "asks the clouds' price APIs (not reachable here); tests/catalog/refresh/test_refresh.py "
    "runs it against recorded responses on loopback",
    "python -m catalog import-facts": "rewrites catalog/data from ../shared/facts",
    "python -m preview.diff.comment --base <PR base SHA>": "the CI workflow's form of the comment command below",
    f"{PY} -m preview.diff.comment --base REF [--base-label NAME] [--output FILE] [--fail-on-cost-increase X]": "diffs every stack file changed against REF, so its output depends on the working tree; "
    "tests/preview/diff/test_diff_comment.py runs it on a repository of its own",
    "python -m whatif --stack gke-h100-512 --workload workloads/gke-h100-512.yaml --format markdown --chart "
    "docs/img/whatif-gke-h100-512.png": "the same command as in the fenced block (run, its tables compared)",
    "python -m whatif.study": "about 10 s of simulation over ../shared/traces; prints the tables of docs/whatif.md",
    "bash scripts/test.sh --quick --record-durations": "a whole quick-loop run that rewrites tests/durations.json; "
    "tests/support_tests/test_durations.py checks what it keeps",
    "python -m whatif.study --write": "rewrites the trace tables of docs/whatif.md; "
    "tests/whatif/test_whatif_study_page.py checks that they are current",
}


def test_every_documented_command_is_run_or_excused():
    covered = {r.documented for r in RUNS + SLOW_RUNS} | CONFIG_RUNS | set(NOT_RUN) | stack_comment_commands()
    assert sorted(documented_commands() - covered) == [], "a command the docs show: add it to RUNS or NOT_RUN"
    assert sorted(covered - documented_commands()) == [], "no longer in the docs: remove it here"


def test_each_stack_file_comment_previews_that_stack():
    """The comment of each stack file shows `bash scripts/preview.sh <its own name>` (works from a fresh clone)."""
    for path in PROJECT_ROOT.glob("Pulumi.*.yaml"):
        if path.name == "Pulumi.yaml":
            continue
        name = path.name[len("Pulumi.") : -len(".yaml")]
        head = " ".join(
            line.lstrip("# ") for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")
        )
        assert f"bash scripts/preview.sh {name}" in head, path.name


@pytest.mark.slow
@pytest.mark.parametrize("case", RUNS + SLOW_RUNS, ids=lambda r: " ".join(r.argv[1:5]))
def test_documented_command_runs_as_documented(case: Run, tmp_path):
    proc = run(case.argv, tmp_path)
    assert proc.returncode == case.exit, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    for text in case.prints:
        assert text in proc.stdout, f"the docs show {text!r}"
    for text in case.stderr_has:
        assert text in proc.stderr
    if case.json:
        json.loads(proc.stdout, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))


@pytest.mark.slow
def test_the_documented_pack_config_runs_as_documented(tmp_path):
    """RULES.md's example config fits the stack its waiver is written for: every key is known, the waiver matches a
    pool (no warning) and nothing is refused (exit 0). Its limits are read, not ignored: the same file with the H100
    limit a cent under the pool's price refuses that pool."""
    config = _rules_example_config(tmp_path)
    proc = run(
        [PY, "-m", "preview", "--stack", "gke-operator-mig", "--policy-pack-config", str(config), "--format", "json"]
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    report = json.loads(proc.stdout)
    assert report["warnings"] == []
    assert [v for v in report["violations"] if v["enforcement"] == "mandatory"] == []
    tight = json.loads(config.read_text(encoding="utf-8"))
    tight["cost-gpu-hour-limit"]["maxUsdPerGpuHourByModel"]["H100_80GB"] = 11.05  # the pool's list price: $11.06
    config.write_text(json.dumps(tight), encoding="utf-8")
    proc = run(
        [PY, "-m", "preview", "--stack", "gke-operator-mig", "--policy-pack-config", str(config), "--format", "json"]
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert {v["policy"] for v in report["violations"] if v["enforcement"] == "mandatory"} == {"cost-gpu-hour-limit"}
