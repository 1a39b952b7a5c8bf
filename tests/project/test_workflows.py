"""The GitHub Actions workflows: actionlint passes (ShellCheck too, when it is installed), the comment markers match
the diff tool, actions are pinned by major version, and permissions are least privilege."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from preview.diff.comment import COMMENT_MARKER, NO_CHANGE_MARKER
from preview.engine import PROJECT_ROOT

WORKFLOWS = PROJECT_ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@v\d+$")


def actionlint() -> str:
    """The binary requirements-dev.txt installs next to the interpreter (or on PATH)."""
    beside = Path(sys.executable).parent / "actionlint"
    found = str(beside) if beside.exists() else shutil.which("actionlint")
    assert found, "actionlint is missing: bash scripts/venv.sh requirements-dev.txt installs it"
    return found


def lint(*paths: Path, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [actionlint(), "-no-color", *map(str, paths)], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return doc


def test_the_two_workflows_exist():
    assert {p.name for p in FILES} == {"stack-diff.yml", "pulumi-preview.yml"}


def test_actionlint_passes():
    done = lint(*FILES)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_really_checks_action_inputs(tmp_path):
    """Guards the test above: a misspelled input of the Pulumi action must be an error."""
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    broken = (WORKFLOWS / "pulumi-preview.yml").read_text().replace("policyPacks:", "policyPack:")
    (folder / "broken.yml").write_text(broken)
    done = lint(folder / "broken.yml", cwd=tmp_path)
    assert done.returncode != 0 and "policyPack" in done.stdout


def test_comment_markers_match_the_diff_tool():
    script = (WORKFLOWS / "stack-diff.yml").read_text()
    assert f"'{COMMENT_MARKER}'" in script and f"'{NO_CHANGE_MARKER}'" in script
    assert "python -m preview.diff.comment" in script and "pytest" in script
    assert "fetch-depth: 0" in script  # the base commit must be there for git show


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_actions_are_pinned_by_major_version(path):
    doc = load(path)
    uses = [step["uses"] for job in doc["jobs"].values() for step in job.get("steps", []) if "uses" in step]
    assert uses and all(PINNED.match(u) for u in uses), uses


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_permissions_are_least_privilege(path):
    doc = load(path)
    assert doc["permissions"] == {"contents": "read"}, "the workflow default must be read-only"
    assert list(doc["on"]) == ["pull_request"]  # never pull_request_target: PR code must not get a write token
    for name, job in doc["jobs"].items():
        extra = {k: v for k, v in job.get("permissions", {}).items() if v != "read"}
        assert set(extra) <= {"pull-requests", "id-token"}, (name, extra)


def test_the_real_preview_uses_oidc_and_the_policy_pack():
    doc = load(WORKFLOWS / "pulumi-preview.yml")
    job = doc["jobs"]["preview"]
    assert job["permissions"]["id-token"] == "write"
    pulumi = next(s for s in job["steps"] if s.get("uses", "").startswith("pulumi/actions@"))
    assert pulumi["with"]["command"] == "preview" and pulumi["with"]["policyPacks"] == "policies"
    assert pulumi["with"]["comment-on-pr"] is True
    text = (WORKFLOWS / "pulumi-preview.yml").read_text()
    assert "secrets.AWS_SECRET_ACCESS_KEY" not in text and "credentials_json" not in text  # no long-lived keys


COMMENT_HARNESS = """
const existing = JSON.parse(process.env.EXISTING);
const calls = [];
const github = {
  paginate: async (fn, args) => existing,
  rest: { issues: {
    listComments: 'listComments',
    updateComment: async (a) => { calls.push(['update', a.comment_id]); },
    createComment: async (a) => { calls.push(['create', a.issue_number]); },
  } },
};
const context = { repo: { owner: 'o', repo: 'r' }, issue: { number: 7 } };
(async () => {
SCRIPT
console.log(JSON.stringify(calls));
})();
"""


@pytest.mark.parametrize(
    "existing, body, expected",
    [
        ([], f"{COMMENT_MARKER}\nchanges", [["create", 7]]),
        (
            [{"id": 3, "user": {"type": "Bot"}, "body": f"{COMMENT_MARKER}\nold"}],
            f"{COMMENT_MARKER}\nnew",
            [["update", 3]],
        ),
        ([], f"{COMMENT_MARKER}\n{NO_CHANGE_MARKER}\nnothing", []),
        (
            [{"id": 3, "user": {"type": "Bot"}, "body": f"{COMMENT_MARKER}\nold"}],
            f"{COMMENT_MARKER}\n{NO_CHANGE_MARKER}",
            [["update", 3]],
        ),
        (
            [{"id": 4, "user": {"type": "User"}, "body": f"quoting {COMMENT_MARKER}"}],
            f"{COMMENT_MARKER}\nx",
            [["create", 7]],
        ),
    ],
    ids=["create", "update", "no-change-no-comment", "no-change-updates-old", "never-edits-a-human-comment"],
)
def test_comment_step_updates_its_own_comment_or_creates_one(tmp_path, existing, body, expected):
    """Runs the workflow's github-script code under node with a fake GitHub client."""
    import json

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the github-script step is JavaScript)")
    doc = load(WORKFLOWS / "stack-diff.yml")
    step = next(s for s in doc["jobs"]["diff"]["steps"] if s.get("uses", "").startswith("actions/github-script@"))
    (tmp_path / "body.md").write_text(body)
    (tmp_path / "run.js").write_text(COMMENT_HARNESS.replace("SCRIPT", step["with"]["script"]))
    done = subprocess.run(
        [node, str(tmp_path / "run.js")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"EXISTING": json.dumps(existing), "BODY_FILE": str(tmp_path / "body.md")},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == expected


def test_the_workflow_runs_the_real_slurm_tests_as_root():
    """A pull request's test job runs every test: the others as the runner user (deselecting real_slurm by marker,
    not skipping it), then the real_slurm ones as root through sudo with CI=true, so a missing Slurm root or upstream
    file is a failure, with the upstream cache the fetch step filled."""
    steps = load(WORKFLOWS / "stack-diff.yml")["jobs"]["test"]["steps"]
    runs = [s.get("run", "") for s in steps]
    test_runs = [r for r in runs if "-m pytest" in r and "--collect-only" not in r]
    assert test_runs and all("not real_slurm" in r for r in test_runs), test_runs
    real = [r for r in runs if "-m real_slurm" in r]
    assert len(real) == 1, runs
    assert real[0].startswith("sudo ") and "CI=true" in real[0] and "scripts/test.sh" in real[0], real[0]
    assert "GPU_CLUSTER_UPSTREAM=$HOME/" in real[0], "sudo may reset HOME: the fetched files must still be found"
    fetch = next(i for i, r in enumerate(runs) if "fetch-upstream.sh" in r)
    assert fetch < runs.index(real[0])
