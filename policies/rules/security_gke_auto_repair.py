"""security-gke-auto-repair-ckv-gcp-9: GKE node pools repair unhealthy nodes (Checkov CKV_GCP_9)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import load_catalog
from policies.findings import Finding
from policies.pools import pool_view
from policies.resources import GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN, dig

ID = "security-gke-auto-repair-ckv-gcp-9"


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    view = pool_view(resource, load_catalog())
    value = dig(resource.props, "management", "autoRepair")
    if view is None or value is True or value is UNKNOWN:
        return
    yield Finding(view.subject, f"auto-repair is {'off' if value is False else 'not set'}",
                  "management.autoRepair: true", "set management.autoRepair: true (gpu-cluster sets it)", view.keys)


RULE = Rule(
    id=ID, title="GKE node auto-repair", category=Category.SECURITY, checkov="CKV_GCP_9",
    description="GKE node pools set management.autoRepair: true.",
    why=("GPU nodes fail in ways only a recreate fixes (Xid errors, a lost NVLink). Auto-repair replaces nodes "
         "that fail health checks instead of leaving a broken GPU node holding a reservation."),
    remediation="1. Set management.autoRepair: true on the node pool.",
    severity=Severity.MEDIUM, enforcement=EnforcementLevel.MANDATORY, applies_to=(GKE_NODE_POOL,), check=check,
)
