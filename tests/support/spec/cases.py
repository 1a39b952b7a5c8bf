"""Valid baseline stacks for the spec error tables, and the helpers every table and test uses.

A row is ``case(base, changes, *expected, id=...)``: ``changes`` edits ``BASELINES[base]`` through
``tests.support.spec.edit`` (paths as the config spells them, ``DELETE`` removes a key), and ``expected`` is every error
a user reads, exactly (``str(SpecIssue)``: path and problem, then received / allowed / fix lines).
"""

from __future__ import annotations

import re
import textwrap
from typing import Any, Mapping

import pytest

from stacks.spec.stack import TOP_LEVEL_KEYS, NodePool
from tests.support.spec.edit import edits
from stacks.validate.issues import SpecError, SpecIssue, allowed_list
from stacks.validate.load import load_spec

GKE_BASELINE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-central1",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
    "nodePools": [{"name": "h100", "machineType": "a3-highgpu-8g", "zones": ["us-central1-a"], "maxNodes": 4}],
}
EKS_BASELINE: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {
        "name": "ml-train",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [{"name": "h100", "machineType": "p5.48xlarge", "zones": ["us-east-1a"], "maxNodes": 4}],
}
BASELINES = {"gke": GKE_BASELINE, "eks": EKS_BASELINE}

H100 = {"name": "h100", "machineType": "a3-highgpu-8g", "zones": ["us-central1-a"], "maxNodes": 4}
SUBNETS_AB = "us-east-1a, us-east-1b"
TOP_KEYS = allowed_list(TOP_LEVEL_KEYS)
"""The settings list grows with features; its order and format are still pinned through the model."""
POOL_KEYS = allowed_list(f.alias or n for n, f in NodePool.model_fields.items())

Changes = Mapping[str | tuple, Any]


def case(base: str, changes: Changes, *expected: str, id: str) -> Any:  # noqa: A002 - pytest's name
    return pytest.param(base, changes, [textwrap.dedent(e).strip("\n") for e in expected], id=id)


def config_for(base: str, changes: Changes) -> dict[str, Any]:
    """``BASELINES[base]`` with ``changes`` applied (a copy; the baseline stays valid for the next row)."""
    return edits(BASELINES[base], changes)


def errors_of(cfg: dict[str, Any]) -> list[str]:
    """Every error ``load_spec`` raises for ``cfg``, as the user reads it; fails the test when it raises none."""
    with pytest.raises(SpecError) as info:
        load_spec(cfg)
    return [str(issue) for issue in info.value.errors]


def assert_every_issue_explains_itself(cfg: dict[str, Any]) -> None:
    """Each issue has its config path, a problem and a fix; the summary line counts the errors."""
    with pytest.raises(SpecError) as info:
        load_spec(cfg)
    for issue in info.value.issues:
        assert issue.path.startswith("gpu-cluster:")
        assert issue.problem and issue.fix
    errors = len(info.value.errors)
    assert str(info.value).startswith(f"{errors} configuration error{'s' if errors != 1 else ''} in the stack config:")


POOL_PATH = re.compile(r"^gpu-cluster:nodePools\[(\d+)\]")


def issues_of(cfg: dict[str, Any]) -> list[SpecIssue]:
    """Every issue ``load_spec`` finds for ``cfg``: errors and warnings when it raises, else the warnings."""
    try:
        return load_spec(cfg)[1]
    except SpecError as exc:
        return exc.issues


def assert_pool_issues_name_their_pool(cfg: dict[str, Any]) -> None:
    """Every issue at ``nodePools[i]…`` opens with ``pool '<name>'`` when that pool has a name to give."""
    pools = cfg.get("nodePools") if isinstance(cfg.get("nodePools"), list) else []
    for issue in issues_of(cfg):
        match = POOL_PATH.match(issue.path)
        if match is None or int(match.group(1)) >= len(pools) or not isinstance(pools[int(match.group(1))], dict):
            continue
        name = pools[int(match.group(1))].get("name")
        if isinstance(name, str):
            assert issue.problem.startswith(f"pool '{name}'"), str(issue)
