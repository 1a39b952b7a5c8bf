"""security-gke-shielded-nodes: GKE clusters enable Shielded GKE Nodes (Checkov CKV_GCP_71)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import Equals, FieldCheck, applies_to, field_checks
from policies.resources import GKE_CLUSTER
from policies.rule import Category, Rule
from policies.registry import register

ID = "security-gke-shielded-nodes"
CHECKS = (
    FieldCheck(
        types=(GKE_CLUSTER,),
        path=("enableShieldedNodes",),
        required=Equals(True),
        unset_complies=True,  # unset means on (the GKE default since 1.18), as in Checkov
        problem="Shielded GKE Nodes are turned off",
        fix="set enableShieldedNodes: true (gpu-cluster sets it)",
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="Shielded GKE Nodes",
        category=Category.SECURITY,
        checkov="CKV_GCP_71",
        former_ids=("security-gke-shielded-nodes-ckv-gcp-71",),
        description="GKE clusters keep Shielded GKE Nodes on.",
        why=(
            "Shielded GKE Nodes give every node a verifiable identity, so a compromised workload cannot impersonate "
            "a node to the control plane with stolen bootstrap credentials."
        ),
        remediation="1. Set enableShieldedNodes: true on the cluster (or remove the false).",
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
    ),
    order=4010,
)
