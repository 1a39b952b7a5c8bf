"""The PR diff of a fleet manager shows the fleet's cost delta (manager and workers), not only the manager's, with
each side's workers read at that side's revision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preview.__main__ import main as preview_main
from preview.diff.comment import fleet_managers, main as comment_main
from preview.diff.compare import diff_configs
from preview.diff.format import signed_usd
from preview.diff.render_markdown import marker, render_diff_markdown
from preview.diff.render_text import render_diff_text
from preview.diff.sources import base_from_git, head_config
from preview.fleet.stack_files import FolderStackFiles
from tests.support.spec.fleet_configs import encoded, raw, stack_config
from tests.support.preview.diff_fixtures import git, stack_text
from tests.support.spec.edit import edit, edits


def test_fleet_cost_delta_in_the_diff():
    head = encoded(edits(raw("fleet"), {("cluster", "systemPool", "maxNodes"): 3}))
    diff = diff_configs("fleet", stack_config("fleet"), head, "main")
    fleet = diff.fleet
    assert fleet is not None
    # the only cost change is one more e2-standard-4 at max: the manager's delta is the fleet's delta
    assert fleet["usdPerHourMax"]["delta"] == pytest.approx(diff.cost.delta_max, abs=1e-3)
    assert fleet["usdPerHourMax"]["delta"] > 0 and fleet["usdPerHourMin"]["delta"] == 0
    assert fleet["usdPerHourMax"]["before"] > 400  # the workers' GPU pools are in the fleet total
    assert fleet["maxGpus"] == {"before": 72, "after": 72, "delta": 0}
    assert "**Fleet total** (manager + workers)" in render_diff_markdown(diff)
    assert "fleet total" in render_diff_text(diff)
    assert diff.as_dict()["fleet"] == fleet


def test_a_standalone_stack_has_no_fleet_delta():
    assert diff_configs("dev", stack_config("dev"), stack_config("dev"), "main").fleet is None


# ---- a worker that changed: each side reads its workers at its own revision (never a stale worker shown as changed)

FLEET_FILES = ("fleet", "fleet-gke", "fleet-eks")
LARGER_L4 = 12
"""fleet-gke's spot L4 pool (g2-standard-24, 2 L4 each) grows from 8 to 12 nodes at max: 8 GPUs more."""


def _fleet_repo(path: Path) -> Path:
    """A git repository whose commit ``base`` holds the fleet example's three stack files, with fleet-gke's L4 pool
    made larger in the working tree (uncommitted), the manager's file untouched."""
    path.mkdir(parents=True)
    for stack in FLEET_FILES:
        (path / f"Pulumi.{stack}.yaml").write_text(stack_text(stack_config(stack)))
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    git(path, "tag", "base")
    (path / "Pulumi.fleet-gke.yaml").write_text(
        stack_text(edit(stack_config("fleet-gke"), "nodePools[1].maxNodes", LARGER_L4))
    )
    return path


@pytest.fixture(scope="module")
def worker_change(tmp_path_factory):
    repo = _fleet_repo(tmp_path_factory.mktemp("fleet") / "repo")
    base = base_from_git(repo / "Pulumi.fleet.yaml", "base")
    diff = diff_configs(
        "fleet",
        base.config,
        head_config(repo / "Pulumi.fleet.yaml"),
        "base",
        base_files=base.stack_files,
        head_files=FolderStackFiles(repo),
    )
    worker_base = base_from_git(repo / "Pulumi.fleet-gke.yaml", "base")
    worker = diff_configs("fleet-gke", worker_base.config, head_config(repo / "Pulumi.fleet-gke.yaml"), "base")
    return repo, diff, worker


@pytest.mark.slow
def test_the_base_side_reads_the_worker_at_the_base_ref(worker_change):
    _, diff, worker = worker_change
    assert isinstance(diff.base.report.fleet, dict) and isinstance(diff.head.report.fleet, dict)
    gke = {
        s: next(c for c in side.report.fleet["clusters"] if c["name"] == "gke")
        for s, side in (("base", diff.base), ("head", diff.head))
    }
    assert gke["base"]["gpus"]["L4"] == 16 and gke["head"]["gpus"]["L4"] == 2 * LARGER_L4
    # the manager's own file did not change: its own cost is the same, the fleet's moves by the worker's delta
    assert not diff.cost.changed_lines and worker.cost.delta_max > 0
    fleet = diff.fleet
    assert fleet["changed"] and fleet["maxGpus"] == {"before": 72, "after": 80, "delta": 8}
    assert fleet["usdPerHourMax"]["delta"] == pytest.approx(worker.cost.delta_max, abs=1e-3)
    assert fleet["usdPerHourMin"]["delta"] == pytest.approx(worker.cost.delta_min, abs=1e-3)
    assert [(c["name"], c["status"]) for c in fleet["clusters"]] == [("gke", "changed")]
    assert fleet["clusters"][0]["usdPerHourMax"]["delta"] == pytest.approx(worker.cost.delta_max, abs=1e-3)


def test_the_worker_change_shows_in_the_manager_diff(worker_change):
    _, diff, worker = worker_change
    assert diff.has_changes  # the manager's file is the same, its fleet is not
    md, text = render_diff_markdown(diff), render_diff_text(diff)
    assert "No change" not in md and "No change" not in text
    assert "**Fleet total** (manager + workers)" in md and "| `gke` | `fleet-gke` |" in md
    assert f"fleet {signed_usd(worker.cost.delta_max)}/h at max" in md
    assert "fleet total" in text and "  gke " in text and "72 → 80" in text
    assert diff.as_dict()["fleet"]["clusters"][0]["name"] == "gke"


def test_working_tree_workers_on_both_sides_would_show_no_fleet_change(worker_change):
    """The bug this replaces: both sides reading the working tree's worker see the same fleet."""
    repo, _, _ = worker_change
    base = base_from_git(repo / "Pulumi.fleet.yaml", "base")
    diff = diff_configs(
        "fleet",
        base.config,
        head_config(repo / "Pulumi.fleet.yaml"),
        "base",
        base_files=FolderStackFiles(repo),
        head_files=FolderStackFiles(repo),
    )
    assert diff.fleet is not None and not diff.fleet["changed"] and not diff.has_changes


def test_a_base_file_reads_its_workers_next_to_it(tmp_path, capsys):
    old = tmp_path / "old"
    old.mkdir()
    (old / "Pulumi.fleet.yaml").write_text(stack_text(stack_config("fleet")))
    code = preview_main(["--stack", "fleet", "--base-file", str(old / "Pulumi.fleet.yaml"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["base"]["state"] == "invalid"  # no worker files next to the base file
    assert any("no stack file Pulumi.fleet-gke.yaml in " + str(old) in e["problem"] for e in doc["base"]["errors"])


@pytest.mark.slow
def test_the_pr_comment_diffs_the_manager_of_a_changed_worker(worker_change, tmp_path):
    repo, _, worker = worker_change
    assert fleet_managers(repo, ["fleet-gke"]) == ["fleet"] and fleet_managers(repo, ["fleet", "fleet-gke"]) == []
    out = tmp_path / "comment.md"
    assert comment_main(["--base", "base", "--base-label", "main", "--root", str(repo), "--output", str(out)]) == 0
    body = out.read_text()
    assert "1 stack file changed against `main`, and 1 fleet manager whose workers changed (`fleet`)" in body
    manager = body[body.index(marker("fleet") + "\n") :]
    assert "**Fleet total** (manager + workers)" in manager and f"{signed_usd(worker.cost.delta_max)}" in manager
