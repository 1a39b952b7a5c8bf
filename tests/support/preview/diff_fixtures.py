"""Fixtures for the stack diff tests: stack configs, throwaway git repositories, and a memoizing previewer.

Every repository is made under the test's tmp_path; nothing touches the project's own git state.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from catalog import load_catalog
from preview.cost import stack_cost
from preview.diff.spec_views import SpecSide
from preview.report import PreviewReport
from stacks.plan.facts import pool_facts
from stacks.validate.load import decode_config, load_spec

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_SYSTEM": "/dev/null",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
}

BASE: dict[str, Any] = {
    "gcp:project": "diff-test-project",
    "gpu-cluster:cloud": "gcp",
    "gpu-cluster:project": "diff-test-project",
    "gpu-cluster:region": "us-central1",
    "gpu-cluster:cluster": {"name": "ml", "authorizedNetworks": ["203.0.113.0/24"]},
    "gpu-cluster:nodePools": [
        {
            "name": "h100",
            "machineType": "a3-highgpu-8g",
            "zones": ["us-central1-a"],
            "minNodes": 0,
            "maxNodes": 4,
            "multiNode": True,
        },
        {
            "name": "l4",
            "machineType": "g2-standard-8",
            "zones": ["us-central1-a", "us-central1-b"],
            "minNodes": 0,
            "maxNodes": 2,
            "capacity": {"type": "spot"},
        },
    ],
    "gpu-cluster:scheduling": {
        "workload": "kubeflow",
        "queues": [
            {"name": "team-a", "quotas": [{"pool": "h100", "gpus": 16}, {"pool": "l4", "gpus": 2}]},
            {"name": "team-b", "quotas": [{"pool": "h100", "gpus": 16}]},
        ],
    },
}
"""A small GKE stack with an H100 and a spot L4 pool and two Kueue queues; well under the default budget."""

OVER_BUDGET_NODES = 120
"""120 × a3-highgpu-8g at $88.49/h = $10,618.80/h: over cost-stack-budget's default $10,000/h."""


def spec_side(config: dict[str, Any]) -> SpecSide:
    """One side of the semantic diff for a flat stack config, built from the spec alone (no program run)."""
    cat = load_catalog()
    spec, _ = load_spec(decode_config(config), cat)
    facts = [pool_facts(spec, p, cat) for p in spec.node_pools]
    return SpecSide(spec, stack_cost(spec, facts, cat), tuple({"pool": f.name, **f.runtime.as_dict()} for f in facts))


def stack_text(config: dict[str, Any]) -> str:
    return yaml.safe_dump({"config": config}, sort_keys=False)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=GIT_ENV, check=True)
    return done.stdout.strip()


def make_repo(path: Path, stack: str, config: dict[str, Any] | None) -> Path:
    """A git repository at ``path`` whose first commit (tagged ``base``) holds ``Pulumi.<stack>.yaml`` (or nothing)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("fixture\n")
    if config is not None:
        (path / f"Pulumi.{stack}.yaml").write_text(stack_text(config))
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    git(path, "tag", "base")
    return path


def write_head(repo: Path, stack: str, config: dict[str, Any] | None, commit: bool = False) -> Path:
    path = repo / f"Pulumi.{stack}.yaml"
    if config is None:
        path.unlink()
    else:
        path.write_text(stack_text(config))
    if commit:
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "head")
    return path


_CACHE: dict[str, PreviewReport] = {}


def cached_previewer(stack: str, config: dict[str, Any], main: Path, stack_files: Any = None) -> PreviewReport:
    """The real preview (policy pack included), run once per distinct config in a test session (``stack_files``:
    where a fleet manager's workers are read; not cached)."""
    from preview.run import preview_config

    if stack_files is not None:
        return preview_config(stack, config, main, stack_files=stack_files)
    key = json.dumps([stack, config, str(main)], sort_keys=True)
    if key not in _CACHE:
        _CACHE[key] = preview_config(stack, config, main)
    return _CACHE[key]
