"""security-gke-auto-upgrade-ckv-gcp-10: GKE node pools follow the release channel's upgrades (Checkov
CKV_GCP_10)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import load_catalog
from policies.findings import Finding
from policies.pools import pool_view
from policies.resources import GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN, dig

ID = "security-gke-auto-upgrade-ckv-gcp-10"


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    view = pool_view(resource, load_catalog())
    value = dig(resource.props, "management", "autoUpgrade")
    if view is None or value is True or value is UNKNOWN:
        return
    yield Finding(view.subject, f"auto-upgrade is {'off' if value is False else 'not set'}",
                  "management.autoUpgrade: true", "set management.autoUpgrade: true (gpu-cluster sets it; upgrades "
                  "follow maxSurge/maxUnavailable)", view.keys)


RULE = Rule(
    id=ID, title="GKE node auto-upgrade", category=Category.SECURITY, checkov="CKV_GCP_10",
    description="GKE node pools set management.autoUpgrade: true.",
    why=("Node images carry kernel, containerd and GPU driver fixes; pools that never upgrade drift out of the "
         "supported version skew and miss security patches. Surge settings control how upgrades proceed."),
    remediation="1. Set management.autoUpgrade: true on the node pool. 2. Tune upgradeSettings for GPU capacity.",
    severity=Severity.MEDIUM, enforcement=EnforcementLevel.MANDATORY, applies_to=(GKE_NODE_POOL,), check=check,
)
