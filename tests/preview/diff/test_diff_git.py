"""The stack diff end to end on fixture git repositories (made here, under tmp_path): the real program, the real
policy pack and real git, one scenario per test. The base is the tag ``base``; the head is the working tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preview.__main__ import main as preview_main
from preview.diff.compare import ABSENT, EXIT_COST, INVALID, CostThreshold, StackDiff, diff_configs, exit_code
from preview.diff.sources import BaseSourceError, base_from_git
from preview.diff.replacement import GKE_NODE_POOL
from tests.support.preview.diff_fixtures import BASE, OVER_BUDGET_NODES, cached_previewer, make_repo, write_head
from tests.support.spec.edit import edit, edits

STACK = "team"


def diff_in_repo(tmp_path: Path, base: dict | None, head: dict | None) -> StackDiff:
    repo = make_repo(tmp_path / "repo", STACK, base)
    path = repo / f"Pulumi.{STACK}.yaml"
    if head is not None or path.exists():
        write_head(repo, STACK, head)
    source = base_from_git(path, "base")
    return diff_configs(STACK, source.config, head, source.label, previewer=cached_previewer)


def entity(diff: StackDiff, kind: str, name: str):
    return next(e for e in diff.entities if e.kind == kind and e.name == name)


def resource(diff: StackDiff, type_: str, name: str):
    return next(c for c in diff.resources.changes if c.type == type_ and c.name == name)


def test_pool_resize_is_an_in_place_update_with_its_cost(tmp_path):
    diff = diff_in_repo(tmp_path, BASE, edit(BASE, "nodePools[0].maxNodes", 8))
    pool = entity(diff, "pool", "h100")
    assert [(c.label, c.before, c.after) for c in pool.changes] == [("max nodes", 4, 8), ("max GPUs", 32, 64)]
    node_pool = resource(diff, GKE_NODE_POOL, "h100")
    assert node_pool.action == "update" and node_pool.paths == ("autoscaling.totalMaxNodeCount",)
    assert diff.resources.count("replace") == 0
    line = next(c for c in diff.cost.lines if c.item == "h100")
    assert line.delta_max == pytest.approx(4 * 88.49) and line.delta_min == 0
    assert diff.cost.delta_max == pytest.approx(4 * 88.49)
    assert (line.before_gpus, line.after_gpus) == (32, 64)
    assert diff.exit_code == 0 and not diff.policy.new


def test_machine_type_change_that_changes_the_gpu_count_replaces_the_pool(tmp_path):
    diff = diff_in_repo(tmp_path, BASE, edit(BASE, "nodePools[1].machineType", "g2-standard-24"))  # 1 -> 2 L4 per node
    pool = entity(diff, "pool", "l4")
    assert ("machine type", "g2-standard-8", "g2-standard-24") in [(c.label, c.before, c.after) for c in pool.changes]
    assert ("GPUs per node", 1, 2) in [(c.label, c.before, c.after) for c in pool.changes]
    node_pool = resource(diff, GKE_NODE_POOL, "l4")
    assert node_pool.action == "replace"
    assert "nodeConfig.guestAccelerators[0].count" in node_pool.replace_reasons
    assert "nodeConfig.machineType" in node_pool.paths
    assert "nodeConfig.machineType" not in node_pool.replace_reasons  # GKE resizes machines in place (provider v7)
    assert "creates the new one before deleting the old one" in node_pool.note
    line = next(c for c in diff.cost.lines if c.item == "l4")
    assert line.after_max > line.before_max and (line.before_gpus, line.after_gpus) == (2, 4)


def test_quota_change_shows_per_queue_and_changes_the_cluster_queue(tmp_path):
    head = edit(BASE, "scheduling.queues[0].quotas[0].gpus", 8)
    diff = diff_in_repo(tmp_path, BASE, head)
    queue = entity(diff, "queue", "team-a")
    assert [(c.label, c.before, c.after) for c in queue.changes] == [("quota h100", 16, 8)]
    assert [e.name for e in diff.entities] == ["team-a"]  # nothing else changed
    assert any("nominalQuota" in p for c in diff.resources.changes for p in c.paths)
    assert diff.resources.count("replace") == 0 and diff.cost.changed_lines == []


def test_new_pool_is_added_with_its_resources_and_cost(tmp_path):
    pools = BASE["gpu-cluster:nodePools"] + [
        {"name": "a100", "machineType": "a2-highgpu-1g", "zones": ["us-central1-a"], "maxNodes": 2}
    ]
    diff = diff_in_repo(tmp_path, BASE, edit(BASE, "nodePools", pools))
    added = entity(diff, "pool", "a100")
    assert added.status == "added"
    assert added.facts["machine type"] == "a2-highgpu-1g" and added.facts["max nodes"] == 2
    assert resource(diff, GKE_NODE_POOL, "a100").action == "add"
    line = next(c for c in diff.cost.lines if c.item == "a100")
    assert line.before_max == 0 and line.after_max > 0 and diff.cost.delta_max == pytest.approx(line.after_max)
    assert diff.resources.count("remove") == 0


def test_removed_pool_is_removed_with_its_quota(tmp_path):
    head = edits(
        BASE,
        {"nodePools": BASE["gpu-cluster:nodePools"][:1], "scheduling.queues[0].quotas": [{"pool": "h100", "gpus": 16}]},
    )
    diff = diff_in_repo(tmp_path, BASE, head)
    assert entity(diff, "pool", "l4").status == "removed"
    queue = entity(diff, "queue", "team-a")
    assert ("quota l4", 2, None) in [(c.label, c.before, c.after) for c in queue.changes]
    assert resource(diff, GKE_NODE_POOL, "l4").action == "remove"
    line = next(c for c in diff.cost.lines if c.item == "l4")
    assert line.after_max == 0 and diff.cost.delta_max == pytest.approx(-line.before_max)


def test_policy_newly_violated_through_the_real_pack(tmp_path):
    diff = diff_in_repo(
        tmp_path, BASE, edits(BASE, {"nodePools[0].maxNodes": OVER_BUDGET_NODES, "scheduling.overcommit": True})
    )
    new = [v["policy"] for v in diff.policy.new]
    assert "cost-stack-budget" in new
    budget = next(v for v in diff.policy.new if v["policy"] == "cost-stack-budget")
    assert budget["enforcement"] == "mandatory" and "over the budget" in budget["message"]
    assert diff.policy.resolved == []
    assert diff.exit_code == 1


def test_policy_resolved_through_the_real_pack(tmp_path):
    over = edits(BASE, {"nodePools[0].maxNodes": OVER_BUDGET_NODES, "scheduling.overcommit": True})
    diff = diff_in_repo(tmp_path, over, edit(BASE, "scheduling.overcommit", True))
    assert [v["policy"] for v in diff.policy.resolved] == ["cost-stack-budget"]
    assert diff.policy.new == [] and diff.exit_code == 0


def test_new_stack_has_no_base(tmp_path):
    diff = diff_in_repo(tmp_path, None, BASE)
    assert diff.base.state == ABSENT
    assert {e.status for e in diff.entities if e.kind == "pool"} == {"added"}
    assert diff.resources.count("add") == len(diff.head.report.resources) and diff.resources.unchanged == 0
    assert diff.cost.before_max == 0 and diff.cost.after_max > 0


def test_deleted_stack_removes_everything(tmp_path):
    diff = diff_in_repo(tmp_path, BASE, None)
    assert diff.head.state == ABSENT and diff.exit_code == 0
    assert diff.resources.count("remove") == len(diff.base.report.resources)
    assert diff.cost.after_max == 0


def test_invalid_head_exits_2_and_names_the_config_path(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", STACK, BASE)
    path = write_head(repo, STACK, edit(BASE, "nodePools[0].machineType", "a3-highgpu-9g"))
    code = preview_main(["--stack", STACK, "--stack-file", str(path), "--base", "base", "--format", "markdown"])
    out = capsys.readouterr().out
    assert code == 2
    assert "gpu-cluster:nodePools[0].machineType" in out and "invalid" in out


def test_invalid_base_still_renders_the_head(tmp_path):
    diff = diff_in_repo(tmp_path, edit(BASE, "nodePools[0].maxNodes", -1), BASE)
    assert diff.base.state == INVALID and diff.exit_code == 0
    assert diff.resources.count("add") == len(diff.head.report.resources)


def test_unknown_ref_says_which_ref_and_how_to_fix(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", STACK, BASE)
    path = write_head(repo, STACK, BASE)
    with pytest.raises(BaseSourceError, match="could not find the ref 'origin/nope'") as err:
        base_from_git(path, "origin/nope")
    assert "fetch" in str(err.value) and "fetch-depth: 0" in str(err.value)
    code = preview_main(["--stack", STACK, "--stack-file", str(path), "--base", "origin/nope"])
    assert code == 2 and "origin/nope" in capsys.readouterr().err


def test_outside_a_git_repository_the_error_says_so(tmp_path):
    path = tmp_path / f"Pulumi.{STACK}.yaml"
    path.write_text("config: {}\n")
    with pytest.raises(BaseSourceError, match="not inside a git repository"):
        base_from_git(path, "HEAD")


def test_cli_json_and_cost_threshold(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", STACK, BASE)
    path = write_head(repo, STACK, edit(BASE, "nodePools[0].maxNodes", 8), commit=True)
    args = ["--stack", STACK, "--stack-file", str(path), "--base", "base", "--format", "json"]
    assert preview_main(args + ["--fail-on-cost-increase", "300"]) == EXIT_COST  # +$353.96/h
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["exitCode"] == EXIT_COST and doc["costThreshold"] == {"limit": "$300.00/h", "exceeded": True}
    assert doc["cost"]["totals"]["usdPerHourMax"]["delta"] == pytest.approx(353.96)
    assert doc["resources"]["update"] >= 1 and doc["changes"][0]["name"] == "h100"
    assert "more than --fail-on-cost-increase $300.00/h" in captured.err
    diff = diff_configs(STACK, BASE, edit(BASE, "nodePools[0].maxNodes", 8), "base", previewer=cached_previewer)
    assert exit_code(diff, CostThreshold.parse("400")) == 0
    assert exit_code(diff, CostThreshold.parse("5%")) == EXIT_COST  # +97% of the base
    assert exit_code(diff, None) == 0


def test_base_file_instead_of_a_ref(tmp_path, capsys):
    old, new = tmp_path / "old.yaml", tmp_path / f"Pulumi.{STACK}.yaml"
    old.write_text(json.dumps({"config": BASE}))
    new.write_text(json.dumps({"config": edit(BASE, "nodePools[0].maxNodes", 8)}))
    assert preview_main(["--stack", STACK, "--stack-file", str(new), "--base-file", str(old)]) == 0
    out = capsys.readouterr().out
    assert "pool h100: max nodes 4 → 8, max GPUs 32 → 64" in out and "+$353.96/h at max" in out
    assert preview_main(["--stack", STACK, "--stack-file", str(new), "--base-file", str(tmp_path / "no.yaml")]) == 2
