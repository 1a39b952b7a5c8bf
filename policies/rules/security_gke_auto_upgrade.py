"""security-gke-auto-upgrade: GKE node pools follow the release channel's upgrades (Checkov CKV_GCP_10)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import Equals, FieldCheck, applies_to, field_checks
from policies.resources import GKE_NODE_POOL
from policies.rule import Category, Rule
from policies.registry import register

ID = "security-gke-auto-upgrade"
CHECKS = (
    FieldCheck(
        types=(GKE_NODE_POOL,),
        path=("management", "autoUpgrade"),
        required=Equals(True),
        problem="auto-upgrade is off, so nodes miss kernel, containerd and driver fixes",
        fix="set management.autoUpgrade: true (gpu-cluster sets it; upgrades follow maxSurge/maxUnavailable)",
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="GKE node auto-upgrade",
        category=Category.SECURITY,
        checkov="CKV_GCP_10",
        former_ids=("security-gke-auto-upgrade-ckv-gcp-10",),
        description="GKE node pools set management.autoUpgrade: true.",
        why=(
            "Node images carry kernel, containerd and GPU driver fixes; pools that never upgrade drift out of the "
            "supported version skew and miss security patches. Surge settings control how upgrades proceed."
        ),
        remediation="1. Set management.autoUpgrade: true on the node pool. 2. Tune upgradeSettings for GPU capacity.",
        severity=Severity.MEDIUM,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
    ),
    order=4050,
)
