"""GKE readers shared by the security rules: the node configs a cluster and its node pools define."""

from __future__ import annotations

from dataclasses import dataclass

from policies.pools import pool_subject
from policies.resources import GKE_CLUSTER, GKE_NODE_POOL, cluster_subject
from policies.rule import Resource
from policies.values import as_dict


@dataclass(frozen=True)
class NodeConfig:
    subject: str
    keys: tuple[str, ...]
    config: dict
    pool: bool
    """True for a node pool; False for a cluster's default node config."""


def node_configs(r: Resource) -> list[NodeConfig]:
    """A node pool's nodeConfig; a cluster's nodeConfig only when it sets one (Checkov checks both)."""
    if r.type == GKE_NODE_POOL:
        subject, keys = pool_subject(r)  # type: ignore[misc]  # a node pool always has one
        return [NodeConfig(subject, keys, as_dict(r.props.get("nodeConfig")), True)]
    if r.type == GKE_CLUSTER and isinstance(r.props.get("nodeConfig"), dict):
        subject, keys = cluster_subject(r)
        return [NodeConfig(f"{subject} (default node config)", keys, r.props["nodeConfig"], False)]
    return []
