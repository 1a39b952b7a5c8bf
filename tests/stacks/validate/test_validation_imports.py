"""``stacks/validate/`` stays pure: it reads the spec, the catalog and the scheduling renderers, never Pulumi or the
layers built on top of it (components, compose, preview, policies)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

VALIDATION = Path(__file__).resolve().parents[3] / "stacks" / "validate"
FORBIDDEN = (
    "pulumi",
    "pulumi_aws",
    "pulumi_gcp",
    "pulumi_kubernetes",
    "pulumi_policy",
    "components",
    "compose",
    "preview",
    "policies",
)
MAX_LINES = 400


def _imported(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    return names + [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]


MODULES = sorted(VALIDATION.glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_validation_imports_no_pulumi_and_no_outer_layer(path: Path):
    top = {name.split(".")[0] for name in _imported(path)}
    assert not top & {f.split(".")[0] for f in FORBIDDEN} and not any(t.startswith("pulumi") for t in top), path.name


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_validation_modules_stay_small(path: Path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES, path.name


def test_the_guard_sees_the_whole_package():
    assert {"load.py", "issues.py", "pool.py", "gpu_runtime.py", "slurm.py"} <= {p.name for p in MODULES}
