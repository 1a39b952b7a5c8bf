"""security-unauthenticated-components: Katib and Kubeflow Pipelines (standalone, no authentication) are reachable
only from their own namespace: a default-deny ingress NetworkPolicy in ``kubeflow``."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.tenancy import KUSTOMIZE_DIRECTORY, default_deny_ingress, directory_of, of_type

ID = "security-unauthenticated-components"
NAMESPACE = "kubeflow"
COMPONENTS = {
    "katib": (
        "Katib",
        "its UI creates Experiments in any namespace, and katib-controller runs their trials with cluster-wide rights",
    ),
    "pipelines": ("Kubeflow Pipelines", "its API starts runs as any ServiceAccount of kubeflow"),
}


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    if default_deny_ingress(resources, NAMESPACE) is not None:
        return
    for r in of_type(resources, KUSTOMIZE_DIRECTORY):
        if "cluster-scoped" in directory_of(r):
            continue  # CRDs and cluster roles: the components themselves come with the other directory
        for key, (title, risk) in COMPONENTS.items():
            if f"/{key}" in directory_of(r) or f"{key}/" in directory_of(r):
                yield Finding(
                    f"{title} ('{r.name}')",
                    f"it authenticates nobody and {risk}; any pod in the cluster can call it",
                    observed=f"no default-deny ingress NetworkPolicy in namespace {NAMESPACE}",
                    required=f"a NetworkPolicy in {NAMESPACE} selecting every pod for Ingress with no "
                    "rule, plus only the allows the components need",
                    fix="keep the Kubeflow component's NetworkPolicies (render/network_policies.py), "
                    "or deploy the authenticated multi-user install instead",
                    keys=(r.name, r.urn),
                    urn=r.urn,
                )


RULE = register(
    Rule(
        id=ID,
        title="Unauthenticated components are not reachable by tenants",
        category=Category.SECURITY,
        stack=True,
        description="Katib and Kubeflow Pipelines installs come with a default-deny ingress NetworkPolicy in kubeflow.",
        why=(
            "The standalone Katib UI and the single-user Kubeflow Pipelines API have no authentication, and act with "
            "cluster-wide rights: katib-controller creates Jobs and reads Secrets in any namespace; the Pipelines API "
            "runs pipelines as any ServiceAccount of kubeflow, including the cache deployer that may approve CSRs and "
            "create mutating webhooks. Any tenant pod that reaches them is cluster-admin in effect."
        ),
        remediation=(
            "1. Create a default-deny ingress NetworkPolicy in kubeflow, then allow only the namespace itself, "
            "the API server to webhooks and trials to the Katib DB manager. 2. Operators reach the UIs through "
            "kubectl port-forward. 3. Or deploy Kubeflow's authenticated multi-user install."
        ),
        severity=Severity.CRITICAL,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(KUSTOMIZE_DIRECTORY,),
        check=check,
    ),
    order=4160,
)
