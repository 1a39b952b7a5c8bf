"""The project's imports as data: every import of every ``.py`` file, the top-level unit it belongs to, the checks
``tests/project/test_architecture.py`` runs on them (allowed-imports table, no Pulumi in pure packages, no cycle).

Pure functions over source text, so the architecture test can feed them synthetic bad code and see it refused.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

SKIPPED_DIRS = {"__pycache__", "node_modules"}
"""Besides hidden folders (``.venv``, ``.git``): never project code."""


@dataclass(frozen=True)
class Import:
    module: str
    """The absolute dotted module imported (relative imports resolved); ``from x import y`` records ``x``."""
    line: int


def project_files(root: Path) -> list[Path]:
    """Every ``.py`` file of the project (all packages, ``__main__.py`` and the tests), sorted."""
    return sorted(
        p
        for p in root.rglob("*.py")
        if not any(part.startswith(".") or part in SKIPPED_DIRS for part in p.relative_to(root).parts)
    )


GROUPS = {"stacks"}
"""Folders whose subpackages are units of their own (``stacks/spec`` is ``stacks.spec``): one stack's parse, validate
and plan steps each have their own row in the allowed-imports table."""


def unit_of(path: Path, root: Path) -> str:
    """The unit a file belongs to: its first folder (``preview``), a grouped subpackage (``stacks.plan``), or the file
    name at the root."""
    parts = path.relative_to(root).parts
    if parts[0] in GROUPS and len(parts) > 2:
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def unit_of_module(module: str) -> str:
    """The unit of a dotted module: ``stacks.plan.stack`` -> ``stacks.plan``, ``preview.engine`` -> ``preview``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] in GROUPS and len(parts) > 1 else parts[0]


def top_level_units(root: Path) -> set[str]:
    return {unit_of(p, root) for p in project_files(root)}


def package_of(path: Path, root: Path) -> list[str]:
    """The dotted package a file's relative imports start from (``preview/diff/cli.py`` -> preview.diff)."""
    return list(path.relative_to(root).parent.parts)


def imports_in(source: str, package: list[str]) -> list[Import]:
    """Every import in ``source``: module level and inside functions, ``import x`` and ``from x import y``, relative
    imports resolved against ``package``, and ``importlib.import_module("x")`` / ``__import__("x")`` with a literal."""
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [Import(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else list(package)
                module = ".".join(base + ([node.module] if node.module else []))
                names = [f"{module}.{a.name}" for a in node.names] if not node.module else [module]
                found += [Import(name, node.lineno) for name in names]
            else:
                found.append(Import(node.module or "", node.lineno))
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append(Import(first.value, node.lineno))
    return found


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("__import__", "import_module")
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def is_pulumi(module: str) -> bool:
    """``pulumi``, ``pulumi.runtime``, ``pulumi_aws``, ``pulumi_policy``, ...: any Pulumi SDK."""
    top = module.split(".")[0]
    return top == "pulumi" or top.startswith("pulumi_")


def refused_imports(
    unit: str, imports: Iterable[Import], allowed: Mapping[str, set[str]], units: set[str], pure: set[str]
) -> list[str]:
    """The imports of ``unit`` the table does not allow, as ``"line N: module (why)"``. A project unit may always
    import itself; a module outside the project is refused only when ``unit`` is pure and the module is Pulumi."""
    refused = []
    for imp in imports:
        top = unit_of_module(imp.module)
        if top in units and top != unit and top not in allowed[unit]:
            refused.append(f"line {imp.line}: {imp.module} ({unit} may import only {sorted(allowed[unit])})")
        elif unit in pure and is_pulumi(imp.module):
            refused.append(f"line {imp.line}: {imp.module} ({unit} is pure: no Pulumi SDK)")
    return refused


def unit_graph(edges: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for src, dst in edges:
        if src != dst:
            graph.setdefault(src, set()).add(dst)
            graph.setdefault(dst, set())
    return graph


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One cycle as ``[a, b, ..., a]``, or None when the graph is acyclic (depth-first search, sorted for a stable
    answer)."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" once fully explored

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, path + [nxt])
                if cycle:
                    return cycle
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start, [start])
            if cycle:
                return cycle
    return None


def module_name(path: Path, root: Path) -> str:
    """``stacks/plan/stack.py`` -> ``stacks.plan.stack``; a package's ``__init__.py`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_graph(sources: Mapping[str, tuple[str, list[str]]]) -> dict[str, set[str]]:
    """Module -> the project modules it imports, module level or inside a function (a lazy import closes a circle
    just the same once both run). ``sources``: module name -> (source text, package for relative imports). ``from
    pkg import sub`` counts as an import of ``pkg.sub`` when that is a module, else of ``pkg``."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, (text, package) in sources.items():
        for node in ast.walk(ast.parse(text)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)] if node.level > 1 else list(package)
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in sources else module for a in node.names]
            for target in targets:
                while target and target not in sources:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def imported_names(source: str) -> list[tuple[str, str, int]]:
    """``(module, name, line)`` of every absolute ``from module import name`` (module level or in a function)."""
    return [
        (node.module or "", alias.name, node.lineno)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and not node.level
        for alias in node.names
    ]
