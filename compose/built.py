"""What a cloud's composition hands back: the cluster's name and kubeconfig, and the facts of every pool."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi

from plan.facts import PoolFacts


@dataclass
class BuiltCluster:
    cluster_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    pools: dict[str, PoolFacts]
