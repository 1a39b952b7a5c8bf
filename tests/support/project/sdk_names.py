"""Find uses of private or internal Pulumi SDK names in source text: imports of them and attribute access to them.

A name is private when any part of its dotted path after the SDK package starts with one underscore
(``pulumi_kubernetes._utilities``, ``pulumi_policy.policy._PolicyAnalyzerServicer``, ``x._foo``). It is internal when
it is runtime state or machinery the SDK does not export even without an underscore: a ``ContextVar`` global
(``pulumi.runtime.settings.ROOT``, ``pulumi.runtime.config.CONFIG``, ``...SETTINGS``; found by resolving the name,
so a new one is caught too) or one of ``INTERNAL`` (``pulumi.runtime.mocks.MockMonitor``, ...).
"""

from __future__ import annotations

import ast
import contextvars
import functools
import importlib
from typing import Any

from tests.support.project.import_graph import is_pulumi

INTERNAL = frozenset(
    {
        "pulumi.runtime.mocks.MockMonitor",
        "pulumi.runtime.mocks.MockEngine",
        "pulumi.runtime.mocks.MockSettings",
        "pulumi.runtime.settings.ROOT",
        "pulumi.runtime.settings.SETTINGS",
        "pulumi.runtime.config.CONFIG",
    }
)
"""Not exported from ``pulumi.runtime`` and not meant for programs; the ContextVar rule covers the globals as well,
listed here so the check does not depend on importing the SDK."""

_MISSING = object()


def _is_private_part(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _resolve(dotted: str) -> Any:
    """The object a dotted name denotes (longest importable module prefix, then attributes), or ``_MISSING``."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


@functools.cache
def is_private_or_internal(dotted: str) -> bool:
    """``dotted`` (an absolute name under a Pulumi SDK) is private or internal, see the module docstring."""
    if not is_pulumi(dotted):
        return False
    if any(_is_private_part(p) for p in dotted.split(".")[1:]) or dotted in INTERNAL:
        return True
    return isinstance(_resolve(dotted), contextvars.ContextVar)


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]`` when the chain ends in a plain name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *parts]
    return None


def private_sdk_uses(source: str) -> list[str]:
    """Every private or internal SDK name ``source`` imports, reaches by attribute or looks up by string (see
    ``_named_by_call``), as ``"line N: dotted.name"``.

    Aliases are followed (``from pulumi.runtime import settings as s`` then ``s.ROOT`` is
    ``pulumi.runtime.settings.ROOT``), in whatever scope they were bound; each name is reported once per line.
    """
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    found: dict[tuple[int, str], None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if is_pulumi(a.name):
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    if is_private_or_internal(a.name):
                        found[(node.lineno, a.name)] = None
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and is_pulumi(node.module):
            if is_private_or_internal(node.module):
                found[(node.lineno, node.module)] = None
            for a in node.names:
                full = f"{node.module}.{a.name}"
                aliases[a.asname or a.name] = full
                if is_private_or_internal(full):
                    found[(node.lineno, full)] = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = _dotted(node)
            if chain and chain[0] in aliases:
                full = ".".join([aliases[chain[0]], *chain[1:]])
                # report the shortest private prefix: `settings.ROOT.set` is `...settings.ROOT`
                parts = full.split(".")
                for cut in range(2, len(parts) + 1):
                    prefix = ".".join(parts[:cut])
                    if is_private_or_internal(prefix):
                        found[(node.lineno, prefix)] = None
                        break
        elif isinstance(node, ast.Call):
            for name in _named_by_call(node, aliases):
                if is_private_or_internal(name):
                    found[(node.lineno, name)] = None
    return [f"line {line}: {name}" for line, name in sorted(found)]


def _named_by_call(call: ast.Call, aliases: dict[str, str]) -> list[str]:
    """Names a call reaches by string: ``import_module("pulumi.x._y")``, ``getattr(pulumi_alias, "_y")`` and any
    ``f("pulumi.module", "name")`` lookup helper (the shims' ``private_name``)."""
    strings = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in call.args[:2]]
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Name) and first.id in aliases and len(strings) == 2 and strings[1]:
        return [f"{aliases[first.id]}.{strings[1]}"]  # getattr(alias, "name")
    if strings and strings[0] and is_pulumi(strings[0]) and " " not in strings[0]:
        names = [strings[0]]
        if len(strings) == 2 and strings[1] and strings[1].isidentifier():
            names.append(f"{strings[0]}.{strings[1]}")
        return names
    return []
