"""security-eks-control-plane-logs: EKS clusters send every control-plane log type to CloudWatch (Checkov
CKV_AWS_37)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import FieldCheck, Includes, applies_to, field_checks
from policies.resources import EKS_CLUSTER
from policies.rule import Category, Config, Rule
from policies.registry import register

ID = "security-eks-control-plane-logs"
ALL_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
REQUIRED = Includes(knob="requiredLogTypes")


def problem(cluster: dict, cfg: Config) -> str:
    missing = REQUIRED.missing(cluster.get("enabledClusterLogTypes"), cfg)
    return f"control-plane log types {', '.join(missing)} are off, so who did what cannot be investigated"


CHECKS = (
    FieldCheck(
        types=(EKS_CLUSTER,),
        path=("enabledClusterLogTypes",),
        required=REQUIRED,
        problem=problem,
        fix="add the missing types to enabledClusterLogTypes (gpu-cluster enables all five)",
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="EKS control-plane logging",
        category=Category.SECURITY,
        checkov="CKV_AWS_37",
        former_ids=("security-eks-control-plane-logs-ckv-aws-37",),
        description="EKS clusters enable every control-plane log type (api, audit, authenticator, controllerManager, "
        "scheduler).",
        why=(
            "Audit and authenticator logs are the only record of who did what to the cluster; without them an "
            "incident cannot be investigated, and they cannot be turned on after the fact."
        ),
        remediation="1. Set enabledClusterLogTypes to all five types. 2. Set a retention on the CloudWatch log group.",
        severity=Severity.MEDIUM,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
        config={
            "requiredLogTypes": {
                "type": "array",
                "items": {"type": "string", "enum": ALL_TYPES},
                "default": ALL_TYPES,
                "description": "Log types every cluster must enable.",
            }
        },
    ),
    order=4100,
)
