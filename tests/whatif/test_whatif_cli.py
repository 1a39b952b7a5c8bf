"""``python -m whatif`` runs on every example stack with its shipped workload profile: strict JSON with the documented
keys, Markdown, the PNG chart, and ``--vs`` deltas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whatif.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml") if p.name != "Pulumi.yaml")


def test_every_example_stack_has_a_workload_profile():
    assert STACKS and all((ROOT / "workloads" / f"{s}.yaml").exists() for s in STACKS)


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "gke-h100-512"])  # the week-long one is in bench/
def test_json_is_strict_and_has_the_documented_keys(stack, capsys):
    assert (
        main(
            [
                "--stack",
                stack,
                "--workload",
                str(ROOT / "workloads" / f"{stack}.yaml"),
                "--format",
                "json",
                "--horizon-hours",
                "24",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert {
        "stack",
        "scheduler",
        "pools",
        "total",
        "waits",
        "preemptions",
        "fairShare",
        "neverStartable",
        "workload",
    } <= set(report)
    total = report["total"]
    assert total["allocatedGpuHours"] <= total["paidGpuHours"]
    assert total["effectiveUsdPerUsedGpuHour"] is None or total["effectiveUsdPerUsedGpuHour"] > 0


@pytest.mark.slow
def test_markdown_chart_and_vs(tmp_path, capsys):
    png = tmp_path / "chart.png"
    assert (
        main(
            [
                "--stack",
                "gke-kueue",
                "--workload",
                str(ROOT / "workloads/gke-kueue.yaml"),
                "--format",
                "markdown",
                "--chart",
                str(png),
                "--vs",
                "eks-kueue",
                "--horizon-hours",
                "12",
            ]
        )
        == 2
    )  # eks-kueue lacks the queues
    assert "no queue 'research' in stack eks-kueue" in capsys.readouterr().err
    assert (
        main(
            [
                "--stack",
                "gke-kueue",
                "--workload",
                str(ROOT / "workloads/gke-kueue.yaml"),
                "--format",
                "markdown",
                "--chart",
                str(png),
                "--vs",
                "gke-kueue",
                "--horizon-hours",
                "12",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "### Compared: `gke-kueue` → `gke-kueue`" in out and "| research: p95 wait |" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_internal_error_is_one_bug_line_and_exit_4_never_a_traceback(monkeypatch, capsys):
    import whatif.run
    from whatif.__main__ import EXIT_INTERNAL, guarded_main

    def broken(*_args, **_kwargs):
        raise KeyError("simulated defect")

    monkeypatch.setattr(whatif.run, "run_whatif", broken)
    argv = ["--stack", "gke-kueue", "--workload", str(ROOT / "workloads/gke-kueue.yaml")]
    assert guarded_main(argv) == EXIT_INTERNAL == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error (a bug in gpu-cluster" in err and "Traceback" not in err
    assert guarded_main([*argv, "--debug"]) == EXIT_INTERNAL
    assert "Traceback" in capsys.readouterr().err


def test_a_project_workload_path_works_from_another_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no workloads/ here: the project's file is read, as --stack reads the project's stack
    assert (
        main(
            [
                "--stack",
                "gke-kueue",
                "--workload",
                "workloads/gke-kueue.yaml",
                "--format",
                "json",
                "--horizon-hours",
                "1",
                "--color",
                "never",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["stack"] == "gke-kueue"
    (tmp_path / "workloads").mkdir()  # a file of that name here wins: the user's own path comes first
    (tmp_path / "workloads" / "gke-kueue.yaml").write_text("kind: nonsense\n")
    assert main(["--stack", "gke-kueue", "--workload", "workloads/gke-kueue.yaml", "--color", "never"]) == 2
