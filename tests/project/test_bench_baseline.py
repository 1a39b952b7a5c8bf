"""The untimed parts of ``bench/whatif_bench.py --baseline``: the baseline worktree (``bench/baseline.py``) is made
next to the repository at the right commit and always removed, runs there import that tree's code, cases the
baseline lacks files for are found, each command runs in its own folder, and the no-bytecode-cache mode leaves no
``__pycache__`` to read. Nothing here is timed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.baseline import BaselineError, baseline_path, baseline_tree, check_imports_from
from bench.timing import measure_interleaved, uncached_bytecode_env
from bench.whatif_bench import CASES, missing_in


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str]:
    """``(repository, first commit, second commit)``: ``version.txt`` says v1 then v2; a ``whatif`` package."""
    root = tmp_path / "proj"
    (root / "whatif").mkdir(parents=True)
    (root / "whatif" / "__init__.py").write_text("")
    (root / "version.txt").write_text("v1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "v1")
    first = git(root, "rev-parse", "HEAD")
    (root / "version.txt").write_text("v2\n")
    git(root, "commit", "-q", "-am", "v2")
    return root, first, git(root, "rev-parse", "HEAD")


def registered(root: Path) -> list[str]:
    return [
        line[len("worktree ") :]
        for line in git(root, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]


def test_the_baseline_is_a_sibling_at_the_commit_and_is_removed(repo):
    root, first, second = repo
    with baseline_tree(root, "HEAD~1") as (path, commit):
        assert commit == first
        assert path == root.parent / f"proj-baseline-{first[:7]}" == baseline_path(root, first)
        assert (path / "version.txt").read_text() == "v1\n"
        assert git(path, "rev-parse", "HEAD") == first
        assert subprocess.run(["git", "symbolic-ref", "-q", "HEAD"], cwd=path).returncode == 1  # detached
        assert str(path) in registered(root)
    assert not path.exists()
    assert str(path) not in registered(root)
    assert git(root, "rev-parse", "HEAD") == second and (root / "version.txt").read_text() == "v2\n"


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_the_baseline_is_removed_when_the_body_fails(repo, error):
    root, _, _ = repo
    with pytest.raises(error):
        with baseline_tree(root, "main") as (path, _):
            (path / "whatif" / "__pycache__").mkdir()  # untracked files, as a bench run leaves them
            (path / "whatif" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"x")
            raise error()
    assert not path.exists()
    assert str(path) not in registered(root)


def test_an_unknown_ref_is_refused_and_creates_nothing(repo):
    root, _, _ = repo
    with pytest.raises(BaselineError, match=r"--baseline 'no-such-ref' names no commit"):
        with baseline_tree(root, "no-such-ref"):
            pass
    assert sorted(p.name for p in root.parent.iterdir()) == ["proj"]


def test_an_existing_folder_at_the_baseline_path_is_left_alone(repo):
    root, first, _ = repo
    taken = baseline_path(root, first)
    taken.mkdir()
    (taken / "mine.txt").write_text("keep")
    with pytest.raises(BaselineError, match="exists already"):
        with baseline_tree(root, first):
            pass
    assert (taken / "mine.txt").read_text() == "keep"


def test_a_run_in_the_baseline_imports_the_baseline_packages(repo):
    root, _, _ = repo
    with baseline_tree(root, "HEAD~1") as (path, _):
        assert check_imports_from(path, ["whatif"]) == [path / "whatif" / "__init__.py"]
        with pytest.raises(BaselineError, match="would import code from elsewhere"):
            check_imports_from(path, ["json"])  # the standard library's: not the tree's


def test_a_case_whose_files_the_baseline_lacks_is_found(tmp_path):
    (tmp_path / "workloads").mkdir()
    (tmp_path / "Pulumi.gke-h100-512.yaml").write_text("")
    (tmp_path / "workloads" / "gke-h100-512.yaml").write_text("")
    (tmp_path / "whatif" / "workload" / "profile").mkdir(parents=True)
    (tmp_path / "whatif" / "run.py").write_text("")
    (tmp_path / "whatif" / "workload" / "profile" / "__init__.py").write_text("")  # a module as a package
    h100, kueue, alibaba = (cli for _, cli in CASES)
    assert missing_in(tmp_path, h100) == []
    assert missing_in(tmp_path, kueue) == ["Pulumi.gke-kueue.yaml", "workloads/gke-kueue.yaml"]
    assert missing_in(tmp_path, alibaba) == [
        "workloads/stacks/Pulumi.alibaba-replay-kueue.yaml",
        "workloads/alibaba-openb.yaml",
    ]
    assert missing_in(tmp_path, None) == ["whatif/report/text.py"]  # the floor's modules


def test_interleaved_commands_run_in_their_own_folders_round_by_round(tmp_path):
    log = tmp_path / "log"
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    cmd = [sys.executable, "-c", f"import os; open({str(log)!r}, 'a').write(os.getcwd() + '\\n')"]
    rounds: list[str] = []
    got = measure_interleaved(
        [(cmd, (0,)), (cmd, (0,))], tmp_path, 2, warm_up=True, cwds=[a, b], progress=rounds.append
    )
    assert log.read_text().splitlines() == [str(a), str(b)] * 3  # warm-up, then 2 rounds
    assert rounds == ["warm-up round done", "round 1/2 done", "round 2/2 done"]
    assert [len(m.cpu_samples_s) for m in got] == [2, 2]


def test_the_no_bytecode_cache_mode_leaves_no_project_bytecode(tmp_path):
    tree, other = tmp_path / "tree", tmp_path / "elsewhere"
    for folder in (tree / "pkg" / "__pycache__", tree / ".venv-like" / "__pycache__", other / "__pycache__"):
        folder.mkdir(parents=True)
        (folder / "m.cpython-311.pyc").write_bytes(b"x")
    (tree / "venv-link").symlink_to(other, target_is_directory=True)  # like .venv -> the shared environment
    before = dict(os.environ)
    env = uncached_bytecode_env(tree)
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert not (tree / "pkg" / "__pycache__").exists()
    assert (tree / ".venv-like" / "__pycache__" / "m.cpython-311.pyc").exists()  # hidden folders are not the project
    assert (other / "__pycache__" / "m.cpython-311.pyc").exists()  # a symlink is not followed
    assert dict(os.environ) == before  # the bench's own environment is unchanged
