"""GKE version strings (``1.32``, ``1.32.11``, ``1.32.11-gke.1174000``) and the fabric version floors: whether a
pinned version is below the floor the catalog sources for its minor. Pure; no Pulumi imports.

A floor table lists, per GKE minor, the first version the fabric works on (cluster-toolkit's
``major_minor_version_acceptable_map``). A minor above the table's newest passes, as in cluster-toolkit (later minors
carry the support); a minor below its oldest is refused (the fabric did not exist there). A version that names only
a minor (``1.32``) or a minor and patch cannot be compared with a ``-gke.N`` floor of that same minor: ``unknown``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Sequence

from catalog.fabric import GkeVersionFloor

GKE_VERSION = re.compile(r"(?P<minor>\d+\.\d+)(?:\.(?P<patch>\d+)(?:-gke\.(?P<build>\d+))?)?")
"""What ``min_master_version`` takes besides ``latest``: a minor, a minor and patch, or a full GKE version."""


class FloorCheck(str, Enum):
    MEETS = "meets"
    BELOW = "below"
    UNKNOWN = "unknown"
    """The version names no patch/build of a minor whose floor needs one (GKE picks it)."""


@dataclass(frozen=True)
class FloorVerdict:
    check: FloorCheck
    floor: GkeVersionFloor | None
    """The floor the version was compared with (its minor's, or the oldest); None: no floor applies."""


def parse(version: str) -> tuple[tuple[int, int], int | None, int | None] | None:
    m = GKE_VERSION.fullmatch(version)
    if m is None:
        return None
    major, minor = (int(x) for x in m["minor"].split("."))
    patch = int(m["patch"]) if m["patch"] is not None else None
    build = int(m["build"]) if m["build"] is not None else None
    return (major, minor), patch, build


def check_floor(version: str, floors: Sequence[GkeVersionFloor]) -> FloorVerdict:
    """``version``: a ``min_master_version`` (``latest`` meets every floor); ``floors``: oldest minor first."""
    if not floors or version == "latest":
        return FloorVerdict(FloorCheck.MEETS, None)
    parsed = parse(version)
    if parsed is None:
        raise ValueError(f"not a GKE version: {version!r}")
    minor, patch, build = parsed
    by_minor = {tuple(int(x) for x in f.minor.split(".")): f for f in floors}
    oldest, newest = min(by_minor), max(by_minor)
    if minor < oldest:
        return FloorVerdict(FloorCheck.BELOW, by_minor[oldest])
    if minor > newest or minor not in by_minor:
        return FloorVerdict(FloorCheck.MEETS, None)
    floor = by_minor[minor]
    floor_parsed = parse(floor.min_version)
    assert floor_parsed is not None, floor  # catalog test: floors are full GKE versions
    _, f_patch, f_build = floor_parsed
    if patch is None:
        return FloorVerdict(FloorCheck.UNKNOWN, floor)
    if patch != f_patch:
        return FloorVerdict(FloorCheck.MEETS if patch > (f_patch or 0) else FloorCheck.BELOW, floor)
    if build is None:
        return FloorVerdict(FloorCheck.UNKNOWN, floor)
    return FloorVerdict(FloorCheck.MEETS if build >= (f_build or 0) else FloorCheck.BELOW, floor)
