"""What a cloud's composition hands back: the cluster's name and kubeconfig, and the facts of every pool."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from stacks.plan.facts import PoolFacts


@dataclass
class BuiltCluster:
    cluster_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    pools: dict[str, PoolFacts]
    fleet_outputs: dict[str, Any] = field(default_factory=dict)
    """A fleet stack's outputs (``compose/fleet.py``): the worker's secret kubeconfig and facts, the manager's egress."""
