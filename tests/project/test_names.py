"""Names that explain themselves: no test is named after a defect number, and no code, data or docs cite "issue N" of
a tracker that is not in the repository (a reader cannot follow it). Say what the rule protects instead; an upstream
tracker is cited as ``owner/repo#N``, which this check lets through."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from preview.engine import PROJECT_ROOT

ISSUE_REF = re.compile(r"\b(?:issues?|defects?)\s+#?\d+", re.IGNORECASE)
DEFECT_TEST = re.compile(r"\bdef test_defects?_\d")
SUFFIXES = {".py", ".md", ".csv", ".yaml", ".yml", ".sh", ".txt", ".ini", ".toml", ".cfg"}
SKIPPED = {".venv", ".git", "__pycache__", "node_modules", "results"}


def project_text_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.suffix in SUFFIXES
        and p.is_file()
        and not any(
            part in SKIPPED or part.startswith(".") and part not in {".github", ".ci"}
            for part in p.relative_to(root).parts[:-1]
        )
    )


def offences(text: str) -> list[str]:
    found = [m.group(0) for m in ISSUE_REF.finditer(text)]
    return found + [m.group(0) for m in DEFECT_TEST.finditer(text)]


def test_the_check_sees_issue_references_and_defect_test_names_and_lets_upstream_ones_through():
    assert offences("the rule of issue 25 and Issue #16, defect 8; defects 9 and 10") == [
        "issue 25",
        "Issue #16",
        "defect 8",
        "defects 9",
    ]
    assert offences("def test_defect_1_yaml_error():\ndef test_defects_1_2_broken():") == [
        "def test_defect_1",
        "def test_defects_1",
    ]
    assert offences("kubernetes-sigs/kueue#3779, slurm-operator#57, the defect kind, an issue of trust") == []


def test_the_files_checked_include_code_data_and_docs():
    names = {p.relative_to(PROJECT_ROOT).as_posix() for p in project_text_files(PROJECT_ROOT)}
    assert {
        "README.md",
        "CONTRIBUTING.md",
        "docs/whatif.md",
        "whatif/study.py",
        "catalog/data/start-path.csv",
        "tests/project/test_names.py",
    } <= names
    assert not any(n.startswith(".venv/") for n in names)


@pytest.mark.parametrize("path", project_text_files(PROJECT_ROOT), ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_no_issue_numbers_and_no_defect_numbered_tests(path: Path):
    if path == Path(__file__):
        return  # its own examples above
    assert offences(path.read_text(encoding="utf-8", errors="replace")) == [], (
        "say what the rule protects instead of citing a tracker number (upstream: owner/repo#N)"
    )
