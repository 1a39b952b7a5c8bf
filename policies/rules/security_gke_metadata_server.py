"""security-gke-metadata-server: GKE nodes expose the GKE metadata server (Checkov CKV_GCP_69)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import Equals, FieldCheck, applies_to, field_checks
from policies.resources import GKE_CLUSTER, GKE_NODE_POOL
from policies.rule import Category, Rule
from policies.registry import register

ID = "security-gke-metadata-server"
MODE = "GKE_METADATA"
CHECKS = (
    FieldCheck(
        types=(GKE_NODE_POOL, GKE_CLUSTER),
        path=("workloadMetadataConfig", "mode"),
        node_config=True,
        required=Equals(MODE),
        problem="pods can read the node's metadata and credentials",
        fix=f"set nodeConfig.workloadMetadataConfig.mode: {MODE} (gpu-cluster sets it) and give pods Workload Identity",
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="GKE metadata server on nodes",
        category=Category.SECURITY,
        checkov="CKV_GCP_69",
        former_ids=("security-gke-metadata-server-ckv-gcp-69",),
        description="GKE node pools (and a cluster's default node config) run the GKE metadata server "
        "(workloadMetadataConfig.mode GKE_METADATA).",
        why=(
            "Without the GKE metadata server, every pod on a node can fetch the node service account's token and "
            "the instance metadata (kube-env bootstrap credentials). Workload Identity needs it too."
        ),
        remediation=(
            "1. Set nodeConfig.workloadMetadataConfig.mode: GKE_METADATA on every pool. 2. Enable Workload "
            "Identity on the cluster and bind pods to their own service accounts."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
    ),
    order=4030,
)
