"""The one-comment-per-PR composer CI runs: which stack files changed, one section each, the worst exit code."""

from __future__ import annotations

from preview.diff.comment import COMMENT_MARKER, NO_CHANGE_MARKER, changed_stacks, main, worst
from preview.diff.render_markdown import marker
from tests.support.preview.diff_fixtures import BASE, OVER_BUDGET_NODES, git, make_repo, stack_text, write_head
from tests.support.spec.edit import edit, edits


def test_changed_stacks_lists_modified_deleted_and_new_files_only(tmp_path):
    repo = make_repo(tmp_path / "repo", "a", BASE)
    (repo / "Pulumi.b.yaml").write_text(stack_text(BASE))
    (repo / "Pulumi.yaml").write_text("name: x\n")
    (repo / "Pulumi.same.yaml").write_text(stack_text(BASE))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")
    git(repo, "tag", "base2")
    write_head(repo, "a", edit(BASE, "nodePools[0].maxNodes", 8))  # modified
    write_head(repo, "b", None)  # deleted
    (repo / "Pulumi.c.yaml").write_text(stack_text(BASE))  # new, not yet committed
    (repo / "Pulumi.yaml").write_text("name: y\n")  # the project file is not a stack
    assert changed_stacks(repo, "base2") == ["a", "b", "c"]


def test_one_comment_with_a_section_per_stack_and_the_worst_exit_code(tmp_path):
    repo = make_repo(tmp_path / "repo", "small", BASE)
    write_head(repo, "small", edit(BASE, "nodePools[0].maxNodes", 8), commit=True)
    (repo / "Pulumi.big.yaml").write_text(
        stack_text(edits(BASE, {"nodePools[0].maxNodes": OVER_BUDGET_NODES, "scheduling.overcommit": True}))
    )
    out = tmp_path / "comment.md"
    code = main(["--base", "base", "--base-label", "main", "--root", str(repo), "--output", str(out)])
    body = out.read_text()
    assert code == 1  # big is new and over the budget: a mandatory violation
    assert body.startswith(COMMENT_MARKER) and NO_CHANGE_MARKER not in body
    assert "2 stack files changed against `main`" in body
    assert body.index(marker("big")) < body.index(marker("small"))
    assert "New stack" in body and "cost-stack-budget" in body and "max nodes 4 → 8" in body
    assert len(body) <= 65_536


def test_no_changed_stack_gives_a_body_ci_never_posts_as_new(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", "small", BASE)
    assert main(["--base", "base", "--root", str(repo)]) == 0
    body = capsys.readouterr().out
    assert COMMENT_MARKER in body and NO_CHANGE_MARKER in body and "No stack file" in body


def test_unknown_base_ref_exits_2(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", "small", BASE)
    assert main(["--base", "origin/gone", "--root", str(repo)]) == 2
    assert "origin/gone" in capsys.readouterr().err


def test_worst_exit_code_order():
    assert worst([0, 3, 1]) == 1 and worst([3, 0]) == 3 and worst([1, 2]) == 2 and worst([]) == 0
