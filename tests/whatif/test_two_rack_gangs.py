"""The what-if places gangs of both GB200 racks on `gke-a4x-nvl72` as the stack does: the stack renders a block
runtime (required block, one 18-node slice per rack), so a 36-node gang runs on the two racks, while a gang that is
not whole racks still never starts."""

from __future__ import annotations

import json

import yaml

from whatif.__main__ import main

STACK = "gke-a4x-nvl72"


def _workload(tmp_path, nodes: int) -> str:
    path = tmp_path / f"w{nodes}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "kind": "profile",
                "description": f"gangs of {nodes} GB200 nodes",
                "hours": 6,
                "queues": [
                    {
                        "queue": "pretraining",
                        "arrivals": {"perHour": 1.0},
                        "sizes": [{"gpus": 4, "nodes": nodes, "weight": 1}],
                        "duration": {"medianMinutes": 60, "sigma": 0.5, "maxHours": 4},
                    }
                ],
            }
        )
    )
    return str(path)


def _report(capsys, *args: str) -> dict:
    assert main(["--format", "json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_two_rack_gang_runs_on_both_racks(capsys, tmp_path):
    report = _report(capsys, "--stack", STACK, "--workload", _workload(tmp_path, 36))
    text = json.dumps(report)
    assert report["neverStartable"] == [] and "per topology block (placement required)" not in text
    (pool,) = [p for p in report["pools"] if p["pool"] == "gb200"]
    assert pool["allocatedGpuHours"] > 0


def test_a_gang_that_is_not_whole_racks_never_starts(capsys, tmp_path):
    report = _report(capsys, "--stack", STACK, "--workload", _workload(tmp_path, 27))
    assert "placed in whole blocks of 18 (placement required)" in json.dumps(report)
