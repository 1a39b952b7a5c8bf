"""A job that reaches its time limit with work left is killed (Slurm: state TIMEOUT). A job submitted without
``--time`` under a QOS with ``MaxWall`` gets that as its limit (acct_policy.c ``_set_time_limit`` l.1219-1235, at
slurm-26-05-3-1), so a long job is cut short there. The what-if must count and warn about it in every report format,
naming the QOS, or the run looks complete."""

from __future__ import annotations

import json

import yaml

from whatif.__main__ import main

STACK = {
    "config": {
        "gcp:project": "whatif-kill",
        "gpu-cluster:cloud": "gcp",
        "gpu-cluster:project": "whatif-kill",
        "gpu-cluster:region": "us-central1",
        "gpu-cluster:cluster": {"name": "kill"},
        "gpu-cluster:nodePools": [
            {
                "name": "h100",
                "machineType": "a3-highgpu-8g",
                "zones": ["us-central1-a"],
                "minNodes": 2,
                "maxNodes": 2,
                "multiNode": True,
            }
        ],
        "gpu-cluster:scheduling": {
            "workload": "slurm",
            "overcommit": True,
            "priorityClasses": [{"name": "high", "value": 1000}, {"name": "low", "value": 10}],
            "queues": [{"name": "t", "quotas": [{"pool": "h100", "gpus": 16}]}],
            "slurm": {"preemptType": "none", "accounting": True, "qosLimits": {"low": {"maxWallMinutes": 30}}},
        },
    }
}
JOBS = {
    "kind": "jobs",
    "jobs": [
        {"id": "long", "submitS": 0, "queue": "t", "gpusPerNode": 8, "runS": 3600, "priority": "low"},
        {"id": "short", "submitS": 0, "queue": "t", "gpusPerNode": 8, "runS": 600, "priority": "low"},
    ],
}


def _run(tmp_path, capsys, fmt: str) -> str:
    stack, wl = tmp_path / "Pulumi.kill.yaml", tmp_path / "wl.yaml"
    stack.write_text(yaml.safe_dump(STACK), encoding="utf-8")
    wl.write_text(yaml.safe_dump(JOBS), encoding="utf-8")
    assert main(["--stack-file", str(stack), "--workload", str(wl), "--format", fmt]) == 0
    return capsys.readouterr().out


def test_a_job_killed_at_its_qos_maxwall_is_counted_and_warned_naming_the_qos(tmp_path, capsys):
    report = json.loads(_run(tmp_path, capsys, "json"))
    assert report["timeLimitKills"] == {"QOS low's MaxWall 30 min": 1}
    (warning,) = [w for w in report["warnings"] if "killed" in w]
    assert "QOS low's MaxWall 30 min" in warning and "(long)" in warning and "short" not in warning
    assert "cut off with work left" in warning and "a QOS whose MaxWall covers their run" in warning


def test_the_time_limit_kill_warning_shows_in_the_text_and_markdown_reports(tmp_path, capsys):
    for fmt in ("text", "markdown"):
        out = " ".join(_run(tmp_path, capsys, fmt).split())
        assert "1 job(s) killed at QOS low's MaxWall 30 min" in out, fmt
