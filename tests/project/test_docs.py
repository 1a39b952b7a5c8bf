"""The README stays a one-screen entry point and docs/ stays true to the code: every relative link and anchor
resolves, every path and module the pages name exists, and the copies of real files and real output are current."""

from __future__ import annotations

import glob
import importlib.util
import re
from pathlib import Path

import pytest

from preview.engine import PROJECT_ROOT
from preview.render.text import render_text
from preview.run import preview_stack

README = PROJECT_ROOT / "README.md"
CONTRIBUTING = PROJECT_ROOT / "CONTRIBUTING.md"
DOCS = sorted((PROJECT_ROOT / "docs").glob("*.md"))
CONTRIBUTOR_DOCS = sorted((PROJECT_ROOT / "docs" / "contributing").glob("*.md"))
"""Notes for contributors, linked from CONTRIBUTING.md rather than the README."""
PAGES = [README, CONTRIBUTING, *DOCS, *CONTRIBUTOR_DOCS]
README_LINE_LIMIT = 300

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
REPO_PATH = re.compile(
    r"`((?:catalog|stacks|validation|compose|components|scheduling|policies|preview|tests|scripts"
    r"|bench|docs|\.github|\.ci)/[\w./*-]*)`"
)
GENERATED_PATHS = ("bench/results",)
"""Written by a run (and ignored by git), so absent from a fresh clone."""
MODULE = re.compile(r"python -m ([\w.]+)")


def _prose(text: str) -> str:
    """The page without fenced code blocks, whose `[x](y)` or `# comment` lines are code, not links or headings."""
    return FENCE.sub("", text)


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: link text kept, lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(_prose(page.read_text(encoding="utf-8"))):
        base, n = _anchor(heading), 0
        while (anchor := base if n == 0 else f"{base}-{n}") in found:  # GitHub numbers repeated headings
            n += 1
        found.add(anchor)
    return found


def test_anchor_rule_matches_github_on_the_headings_we_link_to():
    assert _anchor("Checked by a real Slurm 26.05 (test set-up)") == "checked-by-a-real-slurm-2605-test-set-up"
    assert _anchor("Top-level keys (`gpu-cluster:<key>`)") == "top-level-keys-gpu-clusterkey"
    assert (
        _anchor("Deploying for real: `pulumi preview` / `pulumi up` (with credentials)")
        == "deploying-for-real-pulumi-preview--pulumi-up-with-credentials"
    )


def test_readme_fits_a_screen():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < README_LINE_LIMIT, f"README.md has {lines} lines; move the detail to a page in docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_every_relative_link_resolves(page: Path):
    broken = []
    for target in LINK.findall(INLINE_CODE.sub("", _prose(page.read_text(encoding="utf-8")))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
            continue
        path_part, _, anchor = target.partition("#")
        path = (page.parent / path_part).resolve() if path_part else page
        if not path.exists():
            broken.append(f"{target}: no file {path}")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading with anchor #{anchor} in {path.name}")
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_every_named_path_and_module_exists(page: Path):
    text = page.read_text(encoding="utf-8")
    missing = [
        p for p in REPO_PATH.findall(text) if not p.startswith(GENERATED_PATHS) and not glob.glob(str(PROJECT_ROOT / p))
    ]
    missing += [f"python -m {m}" for m in MODULE.findall(text) if importlib.util.find_spec(m) is None]
    assert missing == [], "stale names: fix the page (files moved in the architecture redesign?)"


def _linked_from(page: Path) -> set[Path]:
    return {(page.parent / t.partition("#")[0]).resolve() for t in LINK.findall(page.read_text(encoding="utf-8"))}


def test_readme_links_every_docs_page():
    linked = _linked_from(README)
    assert [p.name for p in DOCS if p.resolve() not in linked] == []


def test_the_readme_points_contributors_to_contributing_which_links_every_contributor_note():
    assert CONTRIBUTING.resolve() in _linked_from(README), "README.md: link CONTRIBUTING.md (its Contributing section)"
    notes = sorted((PROJECT_ROOT / "docs" / "contributing").iterdir())
    assert CONTRIBUTOR_DOCS, "docs/contributing/ holds the contributor notes"
    assert [p.name for p in notes if p.resolve() not in _linked_from(CONTRIBUTING)] == []


def test_user_pages_do_not_link_the_readme_table_to_contributor_notes():
    """The README's documentation table is for users; contributor notes are reached through CONTRIBUTING.md."""
    table = [line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| [")]
    assert [line for line in table if "docs/contributing/" in line] == []


def _code_block_with(page: Path, needle: str) -> str:
    block = next(b for b in FENCE.findall(page.read_text(encoding="utf-8")) if needle in b)
    return block.split("\n", 1)[1].rsplit("\n", 1)[0]  # without the fence lines


def test_readme_stack_file_is_the_real_dev_stack():
    shown = _code_block_with(README, "gpu-cluster:nodePools:")
    assert shown == (PROJECT_ROOT / "Pulumi.dev.yaml").read_text(encoding="utf-8").rstrip("\n"), (
        "copy Pulumi.dev.yaml into the README"
    )


def test_preview_output_shown_in_the_docs_is_the_real_output():
    real = "\n".join(line.rstrip() for line in render_text(preview_stack("dev"), color=False, width=180).splitlines())
    fix = "rerun .venv/bin/python -m preview --stack dev --color never and copy its output"
    assert _code_block_with(README, "Cost (catalog list prices, USD)") in real, f"README.md: {fix}"
    assert _code_block_with(PROJECT_ROOT / "docs" / "offline-preview.md", "stack dev") == real.rstrip("\n"), (
        f"docs/offline-preview.md: {fix}"
    )
