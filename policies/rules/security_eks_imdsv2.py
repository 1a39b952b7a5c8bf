"""security-eks-imdsv2-ckv-aws-79: EKS nodes require IMDSv2 session tokens (Checkov CKV_AWS_79)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import load_catalog
from policies.findings import Finding
from policies.pools import pool_view
from policies.resources import EKS_NODE_GROUP, LAUNCH_TEMPLATE, pool_tag
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN, dig

ID = "security-eks-imdsv2-ckv-aws-79"


def template_subject(r: Resource) -> tuple[str, tuple[str, ...]]:
    pool = pool_tag(r.props)
    if pool:
        return f"pool '{pool}' (launch template '{r.name}')", (pool, r.name, r.urn)
    return f"launch template '{r.name}'", (r.name, r.urn)


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    if resource.type == EKS_NODE_GROUP:
        if resource.props.get("launchTemplate"):
            return
        view = pool_view(resource, load_catalog())
        assert view is not None  # every EKS node group has a view
        yield Finding(view.subject, "the node group has no launch template, so its nodes use the EKS default "
                      "settings and cannot be held to IMDSv2", "a launch template with metadataOptions.httpTokens: "
                      "required", "give the node group a launch template (gpu-cluster creates one per pool)",
                      view.keys)
        return
    tokens = dig(resource.props, "metadataOptions", "httpTokens")
    endpoint = dig(resource.props, "metadataOptions", "httpEndpoint")
    if tokens == "required" or endpoint == "disabled" or UNKNOWN in (tokens, endpoint):
        return
    subject, keys = template_subject(resource)
    yield Finding(subject, f"instances accept IMDSv1 requests (metadataOptions.httpTokens is {tokens or 'unset'})",
                  "httpTokens: required", "set metadataOptions.httpTokens: required (gpu-cluster sets it)", keys)


RULE = Rule(
    id=ID, title="EKS nodes require IMDSv2", category=Category.SECURITY, checkov="CKV_AWS_79",
    description="EKS node launch templates require IMDSv2 (metadataOptions.httpTokens: required), and every node "
                "group has a launch template.",
    why=("IMDSv1 answers any GET, so a server-side request forgery in any pod reads the node role's credentials. "
         "IMDSv2 needs a session token obtained with a PUT, which SSRF cannot do."),
    remediation=("1. Set metadataOptions.httpTokens: required (and httpEndpoint: enabled) in the launch template. "
                 "2. Give node groups without one a launch template."),
    severity=Severity.HIGH, enforcement=EnforcementLevel.MANDATORY, applies_to=(LAUNCH_TEMPLATE, EKS_NODE_GROUP),
    check=check,
)
