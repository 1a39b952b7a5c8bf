"""Rules register themselves: each module in ``policies/rules/`` ends with ``RULE = register(Rule(...), order=N)``,
and ``discover()`` imports every module of that package and returns the rules sorted by ``order``. Adding a rule is
adding one file; no central list to keep in step. ``order`` fixes the pack's (and RULES.md's, SARIF's) rule order:
thousands by category (1xxx cost, 2xxx topology, 3xxx cross-layer, 4xxx security), gaps of ten for new rules."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from policies.rule import Rule

RULES_PACKAGE = "policies.rules"
_REGISTERED: dict[str, tuple[int, Rule]] = {}
"""Rule ID -> (order, rule), filled as the rule modules are imported."""


def register(rule: Rule, order: int) -> Rule:
    """Record ``rule`` at position ``order``; an ID or an order used twice is a programming error."""
    seen = _REGISTERED.get(rule.id)
    if seen is not None and seen[1] is not rule:
        raise ValueError(f"policy rule {rule.id!r} is registered twice")
    clash = [other.id for at, other in _REGISTERED.values() if at == order and other.id != rule.id]
    if clash:
        raise ValueError(f"policy rules {rule.id!r} and {clash[0]!r} both use order {order}")
    _REGISTERED[rule.id] = (order, rule)
    return rule


def rule_modules(package: str = RULES_PACKAGE) -> list[ModuleType]:
    """Every module of the rules package, imported (which registers its rule), in name order."""
    pkg = importlib.import_module(package)
    return [
        importlib.import_module(f"{package}.{info.name}")
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name)
        if not info.ispkg
    ]


def discover(package: str = RULES_PACKAGE) -> list[Rule]:
    """The registered rules of ``package`` in their order. Every module must register the ``RULE`` it exposes."""
    modules = rule_modules(package)
    for module in modules:
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule) or _REGISTERED.get(rule.id, (0, None))[1] is not rule:
            raise ValueError(f"{module.__name__}: a rule module must end with RULE = register(Rule(...), order=N)")
    mine = {m.RULE.id for m in modules}
    return [rule for _, rule in sorted(v for v in _REGISTERED.values() if v[1].id in mine)]
