"""Bad workload files get the stack files' error quality: the path as written, the value received, what is allowed
and the fix, every problem at once, exit 2 from the CLI and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from whatif.__main__ import main
from whatif.api import cluster_of, load_stack_spec
from whatif.workload.load import WorkloadError, load_workload

CLUSTER = cluster_of(load_stack_spec("gke-kueue"), "gke-kueue")


def errors(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(WorkloadError) as exc:
        load_workload(path, CLUSTER, 0)
    return [str(i) for i in exc.value.issues]


GOOD_QUEUE = """
  - queue: research
    arrivals: {perHour: 2}
    sizes: [{gpus: 8}]
    duration: {medianMinutes: 30}
"""


def test_every_shape_problem_at_once_with_path_value_allowed_and_fix(tmp_path):
    found = errors(
        tmp_path,
        """kind: profile
hours: 24
queues:
  - queue: research
    arrivals: {perHour: 0, process: poison}
    sizes: [{gpus: 8, nodez: 2}]
    duration: {medianMinutes: 30}
""",
    )
    text = "\n".join(found)
    assert len(found) == 3
    assert (
        "error: w.yaml: queues[0].arrivals.perHour: input should be greater than 0\n  received: 0\n"
        "  allowed:  more than 0" in text
    )
    assert (
        "queues[0].arrivals.process: not one of the allowed values\n  received: 'poison'\n"
        "  allowed:  poisson, uniform\n  fix:      did you mean 'poisson'?" in text
    )
    assert "queues[0].sizes[0].nodez: unknown setting" in text and "did you mean 'nodes'?" in text


def test_names_are_checked_against_the_stack(tmp_path):
    found = errors(
        tmp_path,
        "kind: profile\nhours: 24\nqueues:\n"
        + GOOD_QUEUE.replace("research", "reserch")
        + "    priorities: [{name: urgent}]\n    pool: h200\n",
    )
    text = "\n".join(found)
    assert (
        "w.yaml: queues[0].queue: no queue 'reserch' in stack gke-kueue\n  received: 'reserch'\n"
        "  allowed:  research, product\n  fix:      did you mean 'research'?" in text
    )
    assert "queues[0].priorities[0].name: no priority class 'urgent'" in text
    assert "allowed:  production, batch, preemptible" in text
    assert "queues[0].pool: pool 'h200' is not one of the stack" in text


def test_unknown_kind_and_broken_yaml(tmp_path):
    assert "kind: missing or unknown workload kind\n  received: 'profil'" in errors(tmp_path, "kind: profil\n")[0]
    assert "not valid YAML at line 3" in errors(tmp_path, "kind: profile\nhours: [\n")[0]


def test_duplicate_job_ids(tmp_path):
    found = errors(
        tmp_path,
        "kind: jobs\njobs:\n"
        + "".join("  - {id: x, submitS: 0, queue: research, gpusPerNode: 1, runS: 10}\n" for _ in range(2)),
    )
    assert "job ids must be unique" in found[0]


def test_cli_exit_2_without_traceback(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text("kind: profile\nhours: -1\nqueues: []\n")
    assert main(["--stack", "gke-kueue", "--workload", str(path)]) == 2
    err = capsys.readouterr().err
    assert "2 errors in the workload file" in err and "Traceback" not in err
    assert main(["--stack", "nope", "--workload", str(path)]) == 2
    assert "no stack file" in capsys.readouterr().err
