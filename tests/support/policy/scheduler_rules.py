"""The cross-layer scheduler rules' test helpers: the example stacks recorded once per run, and the findings of
those rules alone (``tests/policies/test_policy_cross_layer_scheduling.py`` for Kueue,
``test_policy_cross_layer_slurm.py`` for Slurm; ``test_policy_queued_pool_queue.py`` records through them too)."""

from __future__ import annotations

import functools
import json

from preview.engine import read_stack_file, run_program, stack_file
from tests.support.policy.harness import Pack, with_props

KUEUE_TOPOLOGY = "cross-layer-kueue-topology"
FAIRSHARE = "cross-layer-slurm-fairshare-accounting"
BLOCKS = "cross-layer-slurm-block-size"
NEW_RULES = (KUEUE_TOPOLOGY, FAIRSHARE, BLOCKS)


@functools.cache
def recorded_with(stack: str, config_json: str | None = None):
    """The example ``stack`` recorded (or ``config_json`` as that stack), cached: tests get a copy of the list."""
    config = json.loads(config_json) if config_json else read_stack_file(stack_file(stack))
    return tuple(run_program(config, stack).resources)


def recorded(stack: str) -> list:
    return list(recorded_with(stack))


def swap(resources, old, props):
    return [with_props(old, props) if r is old else r for r in resources]


def new_findings(pack: Pack, resources) -> list[tuple[str, str, str]]:
    return [d for d in pack.stack(resources) if d[0] in NEW_RULES]
