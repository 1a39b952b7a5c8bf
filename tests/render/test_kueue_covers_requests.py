"""Every resource a rendered training runtime asks for is one Kueue can admit: covered by some ClusterQueue or
excluded from quota in the manager config. Kueue holds a workload that requests anything else as inadmissible for
ever (an EFA job's ``vpc.amazonaws.com/efa`` and huge pages were such resources)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from render.kueue import render_kueue
from render.kueue_config import manager_config
from render.trainer import training_runtimes
from tests.render.test_scheduling_schemas import SPECS
from tests.support.spec.scheduling_fixtures import spec_and_facts


def requested(obj: Any) -> Iterator[str]:
    """Every resource name under any ``resources.requests`` / ``resources.limits`` of a rendered object."""
    if isinstance(obj, dict):
        res = obj.get("resources")
        if isinstance(res, dict):
            for kind in ("requests", "limits"):
                yield from (res.get(kind) or {})
        for value in obj.values():
            yield from requested(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from requested(value)


def admissible(name: str, covered: set[str], excluded: list[str]) -> bool:
    return name in covered or any(name.startswith(prefix) for prefix in excluded)


@pytest.mark.parametrize("stack", sorted(SPECS))
def test_every_requested_resource_is_covered_or_excluded(stack):
    spec, facts = spec_and_facts(SPECS[stack])
    objects = render_kueue(spec.scheduling, facts)
    covered = {
        r
        for o in objects.custom_resources()
        if o["kind"] == "ClusterQueue"
        for group in o["spec"]["resourceGroups"]
        for r in group["coveredResources"]
    }
    excluded = manager_config(spec.scheduling)["resources"]["excludeResourcePrefixes"]
    asked = {name for runtime in training_runtimes(facts, objects.placements) for name in requested(runtime)}
    assert "nvidia.com/gpu" in asked  # the walk reached the containers
    assert sorted(n for n in asked if not admissible(n, covered, excluded)) == []


def test_the_efa_runtime_is_what_needed_the_exclusions():
    spec, facts = spec_and_facts(SPECS["eks-kueue"])
    objects = render_kueue(spec.scheduling, facts)
    asked = {name for runtime in training_runtimes(facts, objects.placements) for name in requested(runtime)}
    assert {"vpc.amazonaws.com/efa", "hugepages-2Mi"} <= asked
    assert not admissible("hugepages-2Mi", set(), ["cpu", "memory", "ephemeral-storage"])  # the old exclusions
