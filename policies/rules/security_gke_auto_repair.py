"""security-gke-auto-repair: GKE node pools repair unhealthy nodes (Checkov CKV_GCP_9)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import Equals, FieldCheck, applies_to, field_checks
from policies.resources import GKE_NODE_POOL
from policies.values import dig
from policies.rule import Category, Rule
from policies.registry import register

ID = "security-gke-auto-repair"
CHECKS = (
    FieldCheck(
        types=(GKE_NODE_POOL,),
        path=("management", "autoRepair"),
        required=Equals(True),
        problem="auto-repair is off, so broken GPU nodes are never replaced",
        fix="set management.autoRepair: true (gpu-cluster sets it)",
        # GKE flex-start pools run without auto-repair: a node lives at most maxRunDuration anyway
        applies=lambda props: dig(props, "nodeConfig", "flexStart") is not True,
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="GKE node auto-repair",
        category=Category.SECURITY,
        checkov="CKV_GCP_9",
        former_ids=("security-gke-auto-repair-ckv-gcp-9",),
        description="GKE node pools set management.autoRepair: true (flex-start pools excepted).",
        why=(
            "GPU nodes fail in ways only a recreate fixes (Xid errors, a lost NVLink). Auto-repair replaces nodes "
            "that fail health checks instead of leaving a broken GPU node holding a reservation. GKE flex-start (DWS) pools "
            "run with auto-repair off (cluster-toolkit's gke-node-pool turns it off for them); their nodes are deleted "
            "after maxRunDuration, and a broken one goes when its workload ends."
        ),
        remediation="1. Set management.autoRepair: true on the node pool.",
        severity=Severity.MEDIUM,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
    ),
    order=4040,
)
