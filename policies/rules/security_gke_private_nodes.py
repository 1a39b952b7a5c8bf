"""security-gke-private-nodes: GKE nodes have no public IP addresses (Checkov CKV_GCP_64)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import Equals, FieldCheck, applies_to, field_checks
from policies.resources import GKE_CLUSTER, GKE_NODE_POOL
from policies.rule import Category, Rule
from policies.registry import register

ID = "security-gke-private-nodes"
CHECKS = (
    FieldCheck(
        types=(GKE_CLUSTER,),
        path=("privateClusterConfig", "enablePrivateNodes"),
        required=Equals(True),
        problem="nodes get public IP addresses",
        fix="set privateClusterConfig.enablePrivateNodes: true (gpu-cluster sets it) and reach the internet "
        "through Cloud NAT",
    ),
    FieldCheck(
        types=(GKE_NODE_POOL,),
        path=("networkConfig", "enablePrivateNodes"),
        required=Equals(True),
        unset_complies=True,  # unset: the pool follows the cluster
        problem="the pool overrides the cluster and gives its nodes public IP addresses",
        fix="remove networkConfig.enablePrivateNodes from the pool",
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="GKE private nodes",
        category=Category.SECURITY,
        checkov="CKV_GCP_64",
        former_ids=("security-gke-private-nodes-ckv-gcp-64",),
        description="GKE clusters use private nodes, and no node pool turns that off.",
        why=(
            "A node with a public IP is reachable from the internet on every port its firewall allows; GPU nodes "
            "are a favourite cryptomining target. Private nodes reach out through Cloud NAT only."
        ),
        remediation=(
            "1. Set privateClusterConfig.enablePrivateNodes: true on the cluster. 2. Remove "
            "networkConfig.enablePrivateNodes: false from node pools. 3. Add Cloud NAT for egress."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
    ),
    order=4070,
)
