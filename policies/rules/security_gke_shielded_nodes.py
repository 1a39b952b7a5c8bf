"""security-gke-shielded-nodes-ckv-gcp-71: GKE clusters enable Shielded GKE Nodes (Checkov CKV_GCP_71)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.resources import GKE_CLUSTER, cluster_subject
from policies.rule import Category, Config, Resource, Rule

ID = "security-gke-shielded-nodes-ckv-gcp-71"


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    if resource.props.get("enableShieldedNodes") is not False:
        return  # unset means on (the GKE default since 1.18), as in Checkov
    subject, keys = cluster_subject(resource)
    yield Finding(subject, "Shielded GKE Nodes are turned off (enableShieldedNodes: false)",
                  "enableShieldedNodes: true", "set enableShieldedNodes: true (gpu-cluster sets it)", keys)


RULE = Rule(
    id=ID, title="Shielded GKE Nodes", category=Category.SECURITY, checkov="CKV_GCP_71",
    description="GKE clusters keep Shielded GKE Nodes on.",
    why=("Shielded GKE Nodes give every node a verifiable identity, so a compromised workload cannot impersonate "
         "a node to the control plane with stolen bootstrap credentials."),
    remediation="1. Set enableShieldedNodes: true on the cluster (or remove the false).",
    severity=Severity.HIGH, enforcement=EnforcementLevel.MANDATORY, applies_to=(GKE_CLUSTER,), check=check,
)
