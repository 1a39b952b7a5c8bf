"""security-eks-imds-hop-limit: EKS node metadata answers only the node itself (Checkov CKV_AWS_341)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import AtMost, FieldCheck, applies_to, field_checks
from policies.resources import LAUNCH_TEMPLATE
from policies.rule import Category, Config, Rule
from policies.registry import register
from policies.values import dig

ID = "security-eks-imds-hop-limit"


def endpoint_on(template: dict) -> bool:
    return dig(template, "metadataOptions", "httpEndpoint") != "disabled"


def fix(template: dict, cfg: Config) -> str:
    return (
        f"set metadataOptions.httpPutResponseHopLimit: {int(cfg['maxHopLimit'])} and give pods their own role "
        "with EKS Pod Identity or IRSA"
    )


CHECKS = (
    FieldCheck(
        types=(LAUNCH_TEMPLATE,),
        path=("metadataOptions", "httpPutResponseHopLimit"),
        required=AtMost("maxHopLimit"),
        applies=endpoint_on,
        unset_means="AL2023 EKS AMIs then answer at 2 hops",
        problem="pods can reach the node's metadata credentials",
        fix=fix,
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="EKS metadata hop limit",
        category=Category.SECURITY,
        checkov="CKV_AWS_341",
        former_ids=("security-eks-imds-hop-limit-ckv-aws-341",),
        description="EKS node launch templates set the IMDS response hop limit to 1, so containers cannot reach the "
        "node's instance credentials.",
        why=(
            "Each network hop decrements the IMDSv2 token response's TTL; at 1, a reply never reaches a pod "
            "network namespace, so pods cannot use the node role. Pods get their own role through Pod Identity or "
            "IRSA instead."
        ),
        remediation=(
            "1. Set metadataOptions.httpPutResponseHopLimit: 1 in the launch template. 2. Move pods that need "
            "AWS access to EKS Pod Identity or IRSA."
        ),
        severity=Severity.MEDIUM,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
        config={
            "maxHopLimit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 64,
                "default": 1,
                "description": "Highest allowed httpPutResponseHopLimit.",
            }
        },
    ),
    order=4090,
)
