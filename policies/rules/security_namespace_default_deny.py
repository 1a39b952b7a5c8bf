"""security-namespace-default-deny: every namespace the stack creates (team, ``slurm``, ``kubeflow`` and the system
namespaces of Kueue, the Trainer, Slinky and the GPU add-ons) has a default-deny ingress NetworkPolicy."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.tenancy import NAMESPACE, default_deny_ingress, name_of, of_type

ID = "security-namespace-default-deny"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    for ns in of_type(resources, NAMESPACE):
        name = name_of(ns)
        if default_deny_ingress(resources, name) is not None:
            continue
        yield Finding(
            f"namespace '{name}'",
            "any pod in the cluster, a tenant's included, can open connections to "
            "every port of every pod in it (webhooks, controllers, databases, job ports)",
            observed=f"no default-deny ingress NetworkPolicy in namespace {name}",
            required=f"a NetworkPolicy in {name} selecting every pod for Ingress with no rule, plus only "
            "the allows its components need",
            fix="keep the namespace's NetworkPolicies gpu-cluster renders (render/network_policies.py, "
            "render/system_network_policies.py)",
            keys=(name, ns.name, ns.urn),
            urn=ns.urn,
        )


RULE = register(
    Rule(
        id=ID,
        title="Every namespace the stack creates denies ingress by default",
        category=Category.SECURITY,
        stack=True,
        description="Each Namespace resource of the stack has a default-deny ingress NetworkPolicy (allows on top).",
        why=(
            "Kubernetes lets every pod reach every other pod. Without a default deny a tenant's pod reaches admission "
            "webhooks, controllers' metrics and APIs, slurmctld, slurmdbd and MariaDB, or another team's job ports "
            "directly; the controls that keep tenants in their lane assume it cannot."
        ),
        remediation=(
            "1. Create a NetworkPolicy selecting every pod (podSelector {}) with policyTypes [Ingress] and no "
            "rule. 2. Allow the namespace itself and exactly the ports its callers need (the API server to "
            "webhooks, team namespaces where they call in, labelled metrics scrapers)."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(NAMESPACE,),
        check=check,
    ),
    order=4172,
)
