"""security-eks-imdsv2: EKS nodes require IMDSv2 session tokens (Checkov CKV_AWS_79)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import Equals, FieldCheck, IsSet, applies_to, field_checks
from policies.resources import EKS_NODE_GROUP, LAUNCH_TEMPLATE
from policies.rule import Category, Rule
from policies.registry import register
from policies.values import UNKNOWN, dig


def imds_answers(template: dict) -> bool:
    """False when the metadata endpoint is off (nothing to hold to IMDSv2) or not known until deploy."""
    return dig(template, "metadataOptions", "httpEndpoint") not in ("disabled", UNKNOWN)


ID = "security-eks-imdsv2"
CHECKS = (
    FieldCheck(
        types=(LAUNCH_TEMPLATE,),
        path=("metadataOptions", "httpTokens"),
        required=Equals("required", "IMDSv2 session tokens only"),
        applies=imds_answers,
        problem="instances accept IMDSv1 requests, which SSRF can forge",
        fix="set metadataOptions.httpTokens: required (gpu-cluster sets it)",
    ),
    FieldCheck(
        types=(EKS_NODE_GROUP,),
        path=("launchTemplate",),
        required=IsSet("a launch template with metadataOptions.httpTokens: required"),
        problem="the node group has no launch template, so its nodes use the EKS default settings and "
        "cannot be held to IMDSv2",
        fix="give the node group a launch template (gpu-cluster creates one per pool)",
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="EKS nodes require IMDSv2",
        category=Category.SECURITY,
        checkov="CKV_AWS_79",
        former_ids=("security-eks-imdsv2-ckv-aws-79",),
        description="EKS node launch templates require IMDSv2 (metadataOptions.httpTokens: required), and every node "
        "group has a launch template.",
        why=(
            "IMDSv1 answers any GET, so a server-side request forgery in any pod reads the node role's credentials. "
            "IMDSv2 needs a session token obtained with a PUT, which SSRF cannot do."
        ),
        remediation=(
            "1. Set metadataOptions.httpTokens: required (and httpEndpoint: enabled) in the launch template. "
            "2. Give node groups without one a launch template."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
    ),
    order=4080,
)
