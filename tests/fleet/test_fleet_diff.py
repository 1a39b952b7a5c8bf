"""The PR diff of a fleet manager shows the fleet's cost delta (manager and workers), not only the manager's."""
from __future__ import annotations

import pytest

from preview.diff.compare import diff_configs
from preview.diff.render_markdown import render_diff_markdown
from preview.diff.render_text import render_diff_text
from tests.fleet.fleet_configs import encoded, raw, stack_config
from tests.support.spec.edit import edits


def test_fleet_cost_delta_in_the_diff():
    head = encoded(edits(raw("fleet"), {("cluster", "systemPool", "maxNodes"): 3}))
    diff = diff_configs("fleet", stack_config("fleet"), head, "main")
    fleet = diff.fleet
    assert fleet is not None
    # the only cost change is one more e2-standard-4 at max: the manager's delta is the fleet's delta
    assert fleet["usdPerHourMax"]["delta"] == pytest.approx(diff.cost.delta_max, abs=1e-3)
    assert fleet["usdPerHourMax"]["delta"] > 0 and fleet["usdPerHourMin"]["delta"] == 0
    assert fleet["usdPerHourMax"]["before"] > 400  # the workers' GPU pools are in the fleet total
    assert fleet["maxGpus"] == {"before": 72, "after": 72, "delta": 0}
    assert "**Fleet total** (manager + workers)" in render_diff_markdown(diff)
    assert "fleet total" in render_diff_text(diff)
    assert diff.as_dict()["fleet"] == fleet


def test_a_standalone_stack_has_no_fleet_delta():
    assert diff_configs("dev", stack_config("dev"), stack_config("dev"), "main").fleet is None
