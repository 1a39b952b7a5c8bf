"""Rules are discovered by registration (policies/registry.py): every module of policies/rules/ registers exactly the
rule it exposes, the order is the registered one, and a module that forgets to register, a reused ID or a reused
order is refused. Synthetic rule packages are written to a temporary directory and imported like the real one."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from policies import registry
from policies.pack import RULES
from policies.registry import discover, rule_modules
from policies.rule import Category

ORDER_BY_CATEGORY = [Category.COST, Category.TOPOLOGY, Category.CROSS_LAYER, Category.SECURITY]


def test_every_rule_module_is_in_the_pack_once():
    modules = rule_modules()
    assert len(modules) == len(RULES) >= 36
    assert {m.RULE.id for m in modules} == {r.id for r in RULES}


def test_the_pack_keeps_categories_together_in_the_documented_order():
    cats = [ORDER_BY_CATEGORY.index(r.category) for r in RULES]
    assert cats == sorted(cats)
    assert RULES[0].id == "cost-gpu-hour-limit" and RULES[-1].id == "security-authorized-network-width"


def _rule_source(rule_id: str, order: int | None) -> str:
    body = f'''
        from policies.rule import Category, Rule
        from policies.registry import register
        from pulumi_policy import EnforcementLevel, Severity
        RULE = Rule(id="{rule_id}", title="Synthetic", category=Category.COST, description="d.", why="w.",
                    remediation="r.", severity=Severity.LOW, enforcement=EnforcementLevel.ADVISORY,
                    applies_to=(), check=lambda *a: [])
    '''
    if order is not None:
        body += f"    RULE = register(RULE, order={order})\n"
    return textwrap.dedent(body)


def _package(tmp_path: Path, name: str, rules: dict[str, tuple[str, int | None]]) -> str:
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for module, (rule_id, order) in rules.items():
        (pkg / f"{module}.py").write_text(_rule_source(rule_id, order))
    return name


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("synthetic_rules")]:
        del sys.modules[name]


def test_discovery_sorts_by_registered_order_not_by_file_name(scratch):
    pkg = _package(
        scratch, "synthetic_rules_ok", {"a_second": ("cost-synthetic-b", 20), "b_first": ("cost-synthetic-a", 10)}
    )
    assert [r.id for r in discover(pkg)] == ["cost-synthetic-a", "cost-synthetic-b"]


def test_a_module_that_does_not_register_is_refused(scratch):
    pkg = _package(scratch, "synthetic_rules_forgot", {"lonely": ("cost-synthetic-c", None)})
    with pytest.raises(ValueError, match="lonely: a rule module must end with RULE = register"):
        discover(pkg)


def test_two_rules_with_one_order_are_refused(scratch):
    pkg = _package(scratch, "synthetic_rules_clash", {"one": ("cost-synthetic-d", 30), "two": ("cost-synthetic-e", 30)})
    with pytest.raises(ValueError, match="both use order 30"):
        discover(pkg)
