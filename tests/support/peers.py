"""Which tests start a real peer (a real Slurm daemon, the real Helm binary), found without running them, so the
markers ``real_slurm``/``real_helm`` reach new tests too; and the guard that keeps the quick loop honest.

A test is marked when its function, one of its fixtures, or a function of its own module that these call (followed
through the module, as far as the code names it) names one of the callables that start the peer. A peer reached
another way (a helper in another module) is caught at run time: with ``GPU_CLUSTER_NO_REAL_PEERS=1`` (set by
``scripts/test.sh --quick``) the entry points fail the test with the marker to add, instead of starting the peer.
"""

from __future__ import annotations

import os
import types
from typing import Any, Callable, Iterable

import pytest

NO_REAL_PEERS = "GPU_CLUSTER_NO_REAL_PEERS"
"""Set (to 1) by the quick loop: a test that reaches a real peer anyway fails and names its missing marker."""

PEER_MARKERS = ("real_slurm", "real_helm")

_STARTERS: dict[str, tuple[tuple[str, str], ...]] = {
    "real_slurm": (
        ("tests.support.slurm.root", "Chroot"),
        ("tests.support.slurm.root", "ensure_root"),
        ("tests.support.slurm.real", "SlurmController"),
        ("tests.support.slurm.real", "SlurmDbd"),
        ("tests.support.slurm.cluster", "SlurmCluster"),
        ("tests.support.slurm.session", "real_slurm"),
    ),
    "real_helm": (
        ("tests.support.helm.binary", "helm_path"),
        ("tests.support.helm.render", "render"),
        ("tests.support.helm.render", "render_text"),
        ("tests.support.helm.render", "render_stack"),
        ("tests.support.helm.examples", "rendered"),
        ("tests.support.helm.examples", "with_edit"),
        ("tests.support.helm.value_leaves", "has_effect"),
        ("tests.support.helm.value_leaves", "unstable_lines"),
    ),
}
"""The callables that start each peer (by module and name, so the support modules are imported only when a test
module already imported them)."""


def _starters(marker: str, modules: dict[str, types.ModuleType]) -> set[int]:
    return {
        id(getattr(modules[m], name)) for m, name in _STARTERS[marker] if m in modules and hasattr(modules[m], name)
    }


def _code_objects(func: Any) -> Iterable[types.CodeType]:
    """The code of ``func`` and of the functions, lambdas and comprehensions defined inside it."""
    code = getattr(getattr(func, "__wrapped__", func), "__code__", None)
    stack = [code] if code is not None else []
    while stack:
        code = stack.pop()
        yield code
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))


def reaches(funcs: Iterable[Callable[..., Any]], module_globals: dict[str, Any], targets: set[int]) -> bool:
    """Does any of ``funcs``, or a function or class of the same module that they name, name one of ``targets``?"""
    seen: set[int] = set()
    todo = list(funcs)
    while todo:
        func = todo.pop()
        if id(func) in seen:
            continue
        seen.add(id(func))
        if isinstance(func, type):  # a class of the test module: its methods
            todo.extend(v for v in vars(func).values() if callable(v))
            continue
        for code in _code_objects(func):
            for name in code.co_names:
                value = module_globals.get(name)
                if value is None:
                    continue
                if id(value) in targets:
                    return True
                if getattr(value, "__module__", None) == module_globals.get("__name__") and callable(value):
                    todo.append(value)
    return False


def peer_markers(item: pytest.Item, modules: dict[str, types.ModuleType]) -> list[str]:
    """The peer markers ``item`` needs, from its function and fixtures (see the module docstring)."""
    function = getattr(item, "function", None)
    module = getattr(item, "module", None)
    if function is None or module is None:
        return []
    funcs: list[Callable[..., Any]] = [function]
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info is not None else ():
        funcs.extend(d.func for d in defs)
    found = []
    for marker in PEER_MARKERS:
        targets = _starters(marker, modules)
        # a fixture of another module (conftest) is judged by that module's names
        if targets and any(reaches([f], vars(_module_of(f, modules, module)), targets) for f in funcs):
            found.append(marker)
    return found


def _module_of(func: Any, modules: dict[str, types.ModuleType], default: types.ModuleType) -> types.ModuleType:
    return modules.get(getattr(func, "__module__", "") or "", default)


def refuse_in_quick_loop(marker: str, what: str) -> None:
    """Called where a real peer starts: in the quick loop the test fails and says which marker it lacks."""
    if os.environ.get(NO_REAL_PEERS) == "1":
        pytest.fail(
            f"this test starts {what} but is not marked {marker}: the quick loop runs no real peer. "
            f"Add @pytest.mark.{marker} (or call the starter from the test or a fixture so the marker is "
            f"found automatically, tests/support/peers.py)",
            pytrace=False,
        )
