"""Cloud limits are written once (catalog/data/cloud-limits.csv) and every row is read by a check: a row no check
cites is dead text, and a check citing an id the table lacks would fail only when a stack trips it."""

from __future__ import annotations

import re
from pathlib import Path

from catalog import Cloud, load_catalog
from catalog.cloud_limits import load_cloud_limits, sold_zones
from policies.rules.topology_efa_interfaces import ENA_CARD_LIMITS

ROOT = Path(__file__).resolve().parents[2]
CODE_DIRS = ("catalog", "stacks", "policies", "render", "compose", "components", "preview", "whatif")
CITED = re.compile(r"""cloud_limit\(\s*["']([a-z0-9-]+)["']\s*\)""")


def _code() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for d in CODE_DIRS for p in (ROOT / d).rglob("*.py"))


def _cited() -> set[str]:
    return set(CITED.findall(_code())) | set(ENA_CARD_LIMITS.values())


def test_every_cited_limit_is_a_row():
    rows = load_cloud_limits()
    assert _cited() - set(rows) == set()


def test_every_row_is_read_by_a_check():
    cat = load_catalog()
    by_lookup = {
        r.id
        for r in load_cloud_limits().values()
        if r.id.endswith("-zones")
        and (Cloud(r.cloud), r.applies_to) in cat.machines
        and sold_zones(r.cloud, r.applies_to) is r
    }
    assert set(load_cloud_limits()) - _cited() - by_lookup == set()


def test_rows_are_sorted_by_id_and_dated():
    lines = (ROOT / "catalog/data/cloud-limits.csv").read_text(encoding="utf-8").splitlines()[1:]
    ids = [line.split(",", 1)[0] for line in lines]
    assert ids == sorted(ids)
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", r.as_of) for r in load_cloud_limits().values())
