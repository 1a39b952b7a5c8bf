"""security-eks-control-plane-logs-ckv-aws-37: EKS clusters send every control-plane log type to CloudWatch
(Checkov CKV_AWS_37)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.resources import EKS_CLUSTER, cluster_subject
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN

ID = "security-eks-control-plane-logs-ckv-aws-37"
ALL_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    enabled = resource.props.get("enabledClusterLogTypes")
    if enabled is UNKNOWN:
        return
    have = {t for t in (enabled or []) if isinstance(t, str)}
    missing = [t for t in cfg["requiredLogTypes"] if t not in have]
    if not missing:
        return
    subject, keys = cluster_subject(resource)
    yield Finding(subject, f"control-plane log types {', '.join(missing)} are off (enabled: "
                  f"{', '.join(sorted(have)) or 'none'})", f"all of {', '.join(cfg['requiredLogTypes'])}",
                  "add the missing types to enabledClusterLogTypes (gpu-cluster enables all five)", keys)


RULE = Rule(
    id=ID, title="EKS control-plane logging", category=Category.SECURITY, checkov="CKV_AWS_37",
    description="EKS clusters enable every control-plane log type (api, audit, authenticator, controllerManager, "
                "scheduler).",
    why=("Audit and authenticator logs are the only record of who did what to the cluster; without them an "
         "incident cannot be investigated, and they cannot be turned on after the fact."),
    remediation="1. Set enabledClusterLogTypes to all five types. 2. Set a retention on the CloudWatch log group.",
    severity=Severity.MEDIUM, enforcement=EnforcementLevel.MANDATORY, applies_to=(EKS_CLUSTER,), check=check,
    config={"requiredLogTypes": {"type": "array", "items": {"type": "string", "enum": ALL_TYPES},
                                 "default": ALL_TYPES, "description": "Log types every cluster must enable."}},
)
