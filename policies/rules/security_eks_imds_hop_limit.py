"""security-eks-imds-hop-limit-ckv-aws-341: EKS node metadata answers only the node itself (Checkov
CKV_AWS_341)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.resources import LAUNCH_TEMPLATE
from policies.rule import Category, Config, Resource, Rule
from policies.rules.security_eks_imdsv2 import template_subject
from policies.values import UNKNOWN, as_int, dig

ID = "security-eks-imds-hop-limit-ckv-aws-341"


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    if dig(resource.props, "metadataOptions", "httpEndpoint") == "disabled":
        return
    hops = as_int(dig(resource.props, "metadataOptions", "httpPutResponseHopLimit"))
    limit = int(cfg["maxHopLimit"])
    if hops is UNKNOWN or (isinstance(hops, int) and hops <= limit):
        return
    subject, keys = template_subject(resource)
    observed = f"is {hops}" if hops is not None else "is unset (AL2023 EKS AMIs then answer at 2 hops)"
    yield Finding(subject, f"pods can reach the node's metadata credentials: httpPutResponseHopLimit {observed}",
                  f"at most {limit}, from maxHopLimit", f"set metadataOptions.httpPutResponseHopLimit: {limit} and "
                  "give pods their own role with EKS Pod Identity or IRSA", keys)


RULE = Rule(
    id=ID, title="EKS metadata hop limit", category=Category.SECURITY, checkov="CKV_AWS_341",
    description="EKS node launch templates set the IMDS response hop limit to 1, so containers cannot reach the "
                "node's instance credentials.",
    why=("Each network hop decrements the IMDSv2 token response's TTL; at 1, a reply never reaches a pod "
         "network namespace, so pods cannot use the node role. Pods get their own role through Pod Identity or "
         "IRSA instead."),
    remediation=("1. Set metadataOptions.httpPutResponseHopLimit: 1 in the launch template. 2. Move pods that need "
                 "AWS access to EKS Pod Identity or IRSA."),
    severity=Severity.MEDIUM, enforcement=EnforcementLevel.MANDATORY, applies_to=(LAUNCH_TEMPLATE,), check=check,
    config={"maxHopLimit": {"type": "integer", "minimum": 1, "maximum": 64, "default": 1,
                            "description": "Highest allowed httpPutResponseHopLimit."}},
)
