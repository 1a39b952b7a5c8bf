"""Project files the Pulumi CLI reads (and which no test could otherwise exercise here), and generated docs."""

from __future__ import annotations

import yaml

from preview.engine import PROJECT_ROOT
from stacks.spec import docs

ALLOWED_CONFIG_TYPES = {"string", "integer", "boolean", "array", "object"}  # Pulumi.yaml has no "number"
KNOWN_NAMESPACES = {"gpu-cluster", "gcp", "aws", "kubernetes", "random", "pulumi"}


def test_pulumi_yaml_declares_the_python_project():
    doc = yaml.safe_load((PROJECT_ROOT / "Pulumi.yaml").read_text())
    assert doc["name"] == "gpu-cluster"
    assert doc["runtime"]["name"] == "python"
    assert doc["runtime"]["options"]["virtualenv"] == ".venv"
    for key, decl in (doc.get("config") or {}).items():
        assert decl.get("type", "string") in ALLOWED_CONFIG_TYPES, key


def test_stack_files_only_use_known_namespaces():
    for path in PROJECT_ROOT.glob("Pulumi.*.yaml"):
        config = yaml.safe_load(path.read_text())["config"]
        assert {k.split(":")[0] for k in config} <= KNOWN_NAMESPACES, path.name


def test_config_reference_page_is_current():
    page = docs.PAGE.read_text(encoding="utf-8")
    assert docs.PAGE == PROJECT_ROOT / "docs" / "configuration.md"
    assert docs.reference() in page, "run: .venv/bin/python -m stacks.spec.docs --write"


def test_readme_names_the_commands_ci_runs():
    readme = (PROJECT_ROOT / "README.md").read_text()
    ci = (PROJECT_ROOT / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in ci and "bash scripts/test.sh" in readme
    assert "bash scripts/preview.sh dev" in readme
