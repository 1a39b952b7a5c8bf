"""Lookups over a recording (see preview/engine.py) that fail loudly instead of passing on nothing."""
from __future__ import annotations

from preview.engine import Recording, Registered


def one(rec: Recording, type_: str, name: str | None = None) -> Registered:
    hits = [r for r in rec.resources if r.type == type_ and (name is None or r.name == name)]
    assert len(hits) == 1, f"expected one {type_} {name or ''}, found {[r.name for r in hits]}"
    return hits[0]


def of_type(rec: Recording, type_: str) -> list[Registered]:
    return [r for r in rec.resources if r.type == type_]


def parent_of(rec: Recording, child: Registered) -> Registered:
    parents = [r for r in rec.resources if r.urn == child.parent_urn]
    assert parents, f"{child.name} has no recorded parent ({child.parent_urn})"
    return parents[0]
