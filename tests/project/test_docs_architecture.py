"""docs/architecture.md names every package of the tree, and only those: a package (a folder with ``__init__.py``)
added, moved or removed without the page following it fails here, so the page a newcomer reads first stays the map
of the code as it is. Under ``tests/`` only ``tests`` itself counts: its folders mirror the packages, which the page
states as a rule, and its helpers are described as a group."""

from __future__ import annotations

import re
from pathlib import Path

from preview.engine import PROJECT_ROOT

PAGE = PROJECT_ROOT / "docs" / "architecture.md"
ROW = re.compile(r"^\| `([\w/]+)/` \|", re.MULTILINE)
SKIPPED = {".venv", ".git", "node_modules", "__pycache__"}


def packages(root: Path) -> set[str]:
    """Every folder with an ``__init__.py`` under ``root``, as ``a/b``; under ``tests/`` only ``tests`` itself."""
    found = set()
    for init in root.rglob("__init__.py"):
        parts = init.parent.relative_to(root).parts
        if not parts or any(p in SKIPPED or p.startswith(".") for p in parts):
            continue
        if parts[0] == "tests" and len(parts) > 1:
            continue
        found.add("/".join(parts))
    return found


def named(text: str) -> set[str]:
    """The packages the page's table names, one per row: ``| `stacks/spec/` | its job |``."""
    return set(ROW.findall(text))


def test_the_architecture_page_names_every_package_and_no_other():
    on_page, in_tree = named(PAGE.read_text(encoding="utf-8")), packages(PROJECT_ROOT)
    assert sorted(in_tree - on_page) == [], "packages missing from docs/architecture.md: add a row with its job"
    assert sorted(on_page - in_tree) == [], "docs/architecture.md names packages that do not exist: fix the rows"


def test_the_check_sees_a_package_added_or_removed(tmp_path: Path):
    for folder in ("stacks/spec", "whatif/kueue", "tests/whatif", ".venv/lib/pkg"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "docs").mkdir()  # no __init__.py: a folder, not a package
    assert packages(tmp_path) == {"stacks/spec", "whatif/kueue", "tests"}  # stacks/ has no __init__.py here
    page = "| package | its job |\n|---|---|\n| `stacks/spec/` | models |\n| `gone/` | removed |\n"
    assert named(page) == {"stacks/spec", "gone"}


def test_every_row_of_the_table_says_what_the_package_does():
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if ROW.match(line)]
    empty = [row for row in rows if len(row.split("|")[2].strip()) < 10]
    assert empty == [], "give each package its job in one line"
