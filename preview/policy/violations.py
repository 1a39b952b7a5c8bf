"""Where a violation belongs: the pool (by its gpu-cluster/pool label) or the cluster, and the config path the
user wrote (``gpu-cluster:nodePools[1]``), so reviewers can find the line to change."""

from __future__ import annotations

from typing import Any

from preview.engine import Registered
from stacks.spec.stack import POOL_LABEL_KEY

CLUSTER_TYPES = ("gcp:container/cluster:Cluster", "aws:eks/cluster:Cluster")
STACK_GROUP = "stack"


def _label(inputs: dict[str, Any]) -> str | None:
    for holder in (inputs.get("nodeConfig", {}) or {}).get("labels"), inputs.get("labels"), inputs.get("tags"):
        if isinstance(holder, dict) and isinstance(holder.get(POOL_LABEL_KEY), str):
            return holder[POOL_LABEL_KEY]
    return None


class Locator:
    """Maps resources to pools and pools to config paths for one recording."""

    def __init__(self, resources: list[Registered], pool_paths: dict[str, str], cluster_path: str | None):
        self.by_urn = {r.urn: r for r in resources}
        self.pool_paths = pool_paths
        self.cluster_path = cluster_path
        self._pool_of_parent: dict[str, str] = {}
        for r in resources:
            label = _label(r.inputs) if isinstance(r.inputs, dict) else None
            if label:
                self._pool_of_parent.setdefault(r.parent_urn, label)

    def pool_of(self, urn: str) -> str | None:
        """The pool label on the resource, else on a sibling under the same component, else up the parents."""
        seen = set()
        while urn and urn not in seen:
            seen.add(urn)
            r = self.by_urn.get(urn)
            if r is None:
                return None
            label = _label(r.inputs) if isinstance(r.inputs, dict) else None
            if label:
                return label
            if r.parent_urn in self._pool_of_parent and r.type not in CLUSTER_TYPES:
                return self._pool_of_parent[r.parent_urn]
            urn = r.parent_urn
        return None

    def place(self, urn: str) -> tuple[str, str | None, str | None]:
        """(group label, pool, config path) for a violation on ``urn`` (empty: the whole stack)."""
        if not urn:
            return STACK_GROUP, None, None
        pool = self.pool_of(urn)
        if pool is not None:
            path = self.pool_paths.get(pool)
            return f"pool {pool}", pool, path
        r = self.by_urn.get(urn)
        name = r.name if r else urn.rsplit("::", 1)[-1]
        return (
            f"cluster {name}" if r is not None and self._in_cluster(r) else f"resource {name}",
            None,
            self.cluster_path if r is not None and self._in_cluster(r) else None,
        )

    def _in_cluster(self, r: Registered) -> bool:
        """The cluster itself and what its component creates (system pool, launch template, roles)."""
        node: Registered | None = r
        while node is not None:
            if node.type in CLUSTER_TYPES or node.type.endswith(("GkeCluster", "EksCluster")):
                return True
            node = self.by_urn.get(node.parent_urn)
        return False
