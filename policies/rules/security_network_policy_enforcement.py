"""security-network-policy-enforcement: a stack that creates NetworkPolicies creates a cluster that enforces them
(GKE Dataplane V2 or network policy on; EKS: the vpc-cni add-on with ``enableNetworkPolicy``)."""

from __future__ import annotations

import json
from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.resources import EKS_CLUSTER, GKE_CLUSTER, cluster_subject
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.tenancy import NETWORK_POLICY, of_type
from policies.values import as_dict, dig

ID = "security-network-policy-enforcement"
EKS_ADDON = "aws:eks/addon:Addon"


def _cni_enforces(addon: Resource) -> bool:
    if addon.props.get("addonName") != "vpc-cni":
        return False
    try:
        values = json.loads(str(addon.props.get("configurationValues") or "{}"))
    except ValueError:
        return False
    return str(as_dict(values).get("enableNetworkPolicy", "")).lower() == "true"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    if not of_type(resources, NETWORK_POLICY):
        return
    for c in of_type(resources, GKE_CLUSTER):
        if c.props.get("datapathProvider") == "ADVANCED_DATAPATH" or dig(c.props, "networkPolicy", "enabled") is True:
            continue
        subject, keys = cluster_subject(c)
        yield Finding(
            subject,
            "the stack's NetworkPolicies are stored but nothing enforces them",
            observed=f"datapathProvider {c.props.get('datapathProvider') or 'unset'}, networkPolicy not enabled",
            required="datapathProvider ADVANCED_DATAPATH (Dataplane V2)",
            fix="set datapathProvider: ADVANCED_DATAPATH (gpu-cluster sets it)",
            keys=keys,
            urn=c.urn,
        )
    if any(_cni_enforces(a) for a in of_type(resources, EKS_ADDON)):
        return
    for c in of_type(resources, EKS_CLUSTER):
        subject, keys = cluster_subject(c)
        yield Finding(
            subject,
            "the stack's NetworkPolicies are stored but nothing enforces them (the default VPC CNI ignores them)",
            observed="no vpc-cni add-on with enableNetworkPolicy",
            required='an aws.eks.Addon vpc-cni with configurationValues {"enableNetworkPolicy": "true"}',
            fix="keep the vpc-cni add-on gpu-cluster creates with the cluster; for an existing cluster, "
            "turn its network policy agent on",
            keys=keys,
            urn=c.urn,
        )


RULE = register(
    Rule(
        id=ID,
        title="NetworkPolicies are enforced",
        category=Category.SECURITY,
        stack=True,
        description="A cluster whose stack creates NetworkPolicies enforces them (GKE Dataplane V2; EKS vpc-cni "
        "enableNetworkPolicy).",
        why=(
            "NetworkPolicies are only objects: the CNI enforces them. EKS's default VPC CNI ignores them unless its "
            "network policy agent is on, so the policies that keep tenants away from Katib, Kubeflow Pipelines or "
            "Slurm would be decoration."
        ),
        remediation=(
            "1. GKE: datapathProvider ADVANCED_DATAPATH. 2. EKS: the vpc-cni add-on with configurationValues "
            '{"enableNetworkPolicy": "true"} (nodes on a kernel with eBPF support, e.g. AL2023).'
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(NETWORK_POLICY,),
        check=check,
    ),
    order=4170,
)
