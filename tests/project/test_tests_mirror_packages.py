"""The test tree mirrors the package tree, so the tests of ``whatif/kueue/`` are found in ``tests/whatif/kueue/`` and a
contributor changing one package knows which folder to run. Two rules: every folder of test modules under ``tests/``
names a package folder at the same path (``tests/X/Y`` ↔ ``X/Y``), and every package with modules has a test folder,
unless listed below with why not. Folders of data only (recorded goldens, fixture files) belong to the tests beside
them and are not checked."""

from __future__ import annotations

from pathlib import Path

from preview.engine import PROJECT_ROOT

NOT_MIRRORS = {
    "support": "helpers shared by test modules across packages, grouped by what they support",
    "support_tests": "the helpers' own tests (they test tests/support/, not a package)",
    "project": "tests of the project as a whole: layout, docs, workflows, import rules, formatting",
}
"""Top-level folders under ``tests/`` that are not the tests of one package."""

WITHOUT_TEST_FOLDER = {
    "bench": "a contributor's benchmark tool, not shipped code; tests/project/test_bench_baseline.py checks it",
    "policies/rules": "one module per rule, each tested through the pack in tests/policies/ (a table per family)",
    "preview/mocks": "the Pulumi mocks every preview test runs through; they have no behaviour of their own",
    "whatif/report": "the reports are checked on the runs that print them (tests/whatif/kueue/, tests/whatif/fleet/)",
}
"""Packages with modules and no test folder of their own, each with why."""

SKIPPED = {".venv", ".git", "node_modules", "__pycache__"}


def _hidden(parts: tuple[str, ...]) -> bool:
    return any(p in SKIPPED or p.startswith(".") for p in parts)


def folders_of_tests(root: Path) -> set[str]:
    """Every folder under ``root/tests`` holding a Python module, as ``X/Y`` (``tests/`` itself left out)."""
    tests = root / "tests"
    found = set()
    for module in tests.rglob("*.py"):
        parts = module.parent.relative_to(tests).parts
        if parts and not _hidden(parts):
            found.add("/".join(parts))
    return found


def packages_with_modules(root: Path) -> set[str]:
    """Every package (a folder with ``__init__.py``) outside ``tests/`` holding a module besides ``__init__.py``."""
    found = set()
    for init in root.rglob("__init__.py"):
        parts = init.parent.relative_to(root).parts
        if not parts or parts[0] == "tests" or _hidden(parts):
            continue
        if any(p.name != "__init__.py" for p in init.parent.glob("*.py")):
            found.add("/".join(parts))
    return found


def strays(root: Path) -> list[str]:
    """Test folders that name no package folder at the same path."""
    return sorted(
        folder
        for folder in folders_of_tests(root)
        if folder.split("/")[0] not in NOT_MIRRORS and not (root / folder / "__init__.py").is_file()
    )


def untested(root: Path) -> list[str]:
    """Packages with modules that have no test folder and are not listed in ``WITHOUT_TEST_FOLDER``."""
    have = folders_of_tests(root)
    return sorted(p for p in packages_with_modules(root) if p not in have and p not in WITHOUT_TEST_FOLDER)


def test_every_test_folder_names_a_package_at_the_same_path():
    assert strays(PROJECT_ROOT) == [], (
        "these test folders name no package: move each module to tests/<the package it mainly tests>/ "
        "(or, for a folder that is not one package's tests, list it in NOT_MIRRORS with why)"
    )


def test_every_package_with_modules_has_a_test_folder():
    assert untested(PROJECT_ROOT) == [], (
        "these packages have no test folder: add tests/<package>/ (or list the package in WITHOUT_TEST_FOLDER with why)"
    )


def test_every_listed_exception_is_still_needed():
    packages, have = packages_with_modules(PROJECT_ROOT), folders_of_tests(PROJECT_ROOT)
    stale = sorted(p for p in WITHOUT_TEST_FOLDER if p not in packages or p in have)
    assert stale == [], "these packages are gone or have a test folder now: remove them from WITHOUT_TEST_FOLDER"
    assert sorted(NOT_MIRRORS) == sorted(p for p in have if "/" not in p and p in NOT_MIRRORS)


def _tree(root: Path, files: list[str]) -> Path:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return root


def test_a_test_folder_of_no_package_is_a_stray(tmp_path: Path):
    root = _tree(
        tmp_path,
        [
            "whatif/__init__.py",
            "whatif/kueue/__init__.py",
            "whatif/kueue/sched.py",
            "tests/whatif/kueue/test_sched.py",
            "tests/fleet/test_fleet.py",  # a feature's folder, not a package
            "tests/render/golden/out.yaml",  # data beside its tests: not a test folder
            "tests/support/helper.py",
        ],
    )
    assert strays(root) == ["fleet"]


def test_a_package_with_modules_and_no_test_folder_is_reported(tmp_path: Path):
    root = _tree(
        tmp_path,
        [
            "whatif/__init__.py",
            "whatif/engine.py",
            "whatif/slurm/__init__.py",
            "whatif/slurm/sched.py",
            "whatif/empty/__init__.py",  # no module besides __init__.py: nothing to test
            "tests/whatif/test_engine.py",
            ".venv/lib/pkg/__init__.py",
            ".venv/lib/pkg/mod.py",
        ],
    )
    assert untested(root) == ["whatif/slurm"]
    _tree(root, ["tests/whatif/slurm/test_sched.py"])
    assert untested(root) == []
