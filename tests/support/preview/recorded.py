"""Lookups over a recording (see preview/engine.py) that fail loudly instead of passing on nothing."""

from __future__ import annotations

from typing import Any

from catalog.image_digests import DEPLOY_DIGEST, load_image_digests
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


def offline_pinned(obj: Any) -> Any:
    """A rendered object as the offline program registers it: every ``image`` the catalog pins by digest
    (catalog/data/image-digests.csv) as ``<image>@<cited digest>`` or ``<image>@DEPLOY_DIGEST`` (written here from the
    table, independently of components/image_digests.py)."""
    if isinstance(obj, dict):
        return {k: (_pinned(v) if k == "image" and isinstance(v, str) else offline_pinned(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [offline_pinned(v) for v in obj]
    return obj


def _pinned(image: str) -> str:
    row = load_image_digests().get(image)
    return image if row is None else f"{image}@{row.digest or DEPLOY_DIGEST}"
