"""Type tokens and small readers for the concrete resources the rules inspect."""

from __future__ import annotations

import re
from typing import Any

from policies.values import as_dict, dig
from stacks.spec.stack import GPU_TAINT_KEY, POOL_LABEL_KEY  # noqa: F401 (re-exported to the rules)

GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
HELM_CHART_V4 = "kubernetes:helm.sh/v4:Chart"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"


_GCP_ZONE = re.compile(r"^([a-z]+-[a-z]+[0-9]+)-[a-z]$")


def gcp_region_of(location: Any) -> str | None:
    """``us-central1-a`` -> ``us-central1``; a region stays as it is."""
    if not isinstance(location, str):
        return None
    match = _GCP_ZONE.match(location)
    return match.group(1) if match else location


def is_gcp_zone(location: Any) -> bool:
    return isinstance(location, str) and bool(_GCP_ZONE.match(location))


def tags_of(props: dict) -> dict:
    """AWS tags as the resource will carry them (``tags``; the provider adds defaults at deploy)."""
    return as_dict(props.get("tags"))


def pool_tag(props: dict) -> str | None:
    value = tags_of(props).get(POOL_LABEL_KEY)
    return value if isinstance(value, str) else None


def release_label(props: dict, name: str) -> str:
    """``Helm release 'nvdp' (chart nvidia-device-plugin)`` for messages."""
    chart = dig(props, "chart")
    if isinstance(chart, str) and chart:
        return f"Helm release '{name}' (chart {chart})"
    return f"Helm release '{name}'"


def cluster_subject(r: Any) -> tuple[str, tuple[str, ...]]:
    """``cluster 'ml'`` and the names a waiver may use, from a GKE or EKS cluster resource."""
    name = r.props.get("name") if isinstance(r.props.get("name"), str) else r.name
    return f"cluster '{name}'", (name, r.name, r.urn)
