"""GKE version floors: a pinned ``min_master_version`` against cluster-toolkit's per-minor floor table."""

from __future__ import annotations

import pytest

from catalog.fabric import FabricKind, GkeVersionFloor, load_fabric_catalog
from catalog.gke_version import FloorCheck, check_floor, parse

FLOORS = [
    GkeVersionFloor(FabricKind.TCPXO, False, m, v, "test")
    for m, v in [("1.28", "1.28.9-gke.1250000"), ("1.29", "1.29.4-gke.1542000")]
]


@pytest.mark.parametrize(
    "version, check, minor",
    [
        ("1.27.99-gke.1", FloorCheck.BELOW, "1.28"),  # the fabric did not exist before the oldest floor
        ("1.28.9-gke.1249999", FloorCheck.BELOW, "1.28"),
        ("1.28.9-gke.1250000", FloorCheck.MEETS, "1.28"),
        ("1.28.10", FloorCheck.MEETS, "1.28"),  # a later patch of the minor
        ("1.28.8", FloorCheck.BELOW, "1.28"),
        ("1.28.9", FloorCheck.UNKNOWN, "1.28"),  # GKE picks the build
        ("1.29", FloorCheck.UNKNOWN, "1.29"),  # GKE picks the patch
        ("1.30.0-gke.1", FloorCheck.MEETS, None),  # newer minors carry the support (cluster-toolkit)
        ("latest", FloorCheck.MEETS, None),
    ],
)
def test_check_floor(version, check, minor):
    verdict = check_floor(version, FLOORS)
    assert verdict.check == check
    assert (verdict.floor.minor if verdict.floor else None) == minor


def test_no_floor_means_nothing_to_check_and_bad_versions_are_refused():
    assert check_floor("1.20", []).check == FloorCheck.MEETS
    with pytest.raises(ValueError):
        check_floor("v1.30", FLOORS)
    assert parse("1.32.11-gke.1174000") == ((1, 32), 11, 1174000) and parse("1.32") == ((1, 32), None, None)


def test_catalog_floors_check_against_themselves():
    fab = load_fabric_catalog()
    for kind, managed in [(FabricKind.TCPX, False), (FabricKind.TCPXO, False), (FabricKind.RDMA, True)]:
        for floor in fab.version_floors(kind, managed):
            assert check_floor(floor.min_version, fab.version_floors(kind, managed)).check == FloorCheck.MEETS
