"""security-team-namespace-admission: a team namespace (one holding a Kueue LocalQueue) is Pod Security ``baseline``
or ``restricted``, or a Deny-bound ValidatingAdmissionPolicy that enforces baseline covers it."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.tenancy import ENFORCE, NAMESPACE, denying_policies, expressions, name_of, of_type, team_namespaces
from policies.values import as_dict, dig

ID = "security-team-namespace-admission"
SAFE_LEVELS = ("baseline", "restricted")
BASELINE_MARKERS = ("privileged", "hostPID", "hostNetwork", "hostPath")
"""A policy counts as enforcing baseline when its CEL checks at least these (gpu-cluster-fabric-pods does)."""


def _enforces_baseline(policy: Resource) -> bool:
    text = expressions(policy)
    return all(marker in text for marker in BASELINE_MARKERS)


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    teams = team_namespaces(resources)
    for ns in of_type(resources, NAMESPACE):
        name = name_of(ns)
        level = as_dict(dig(ns.props, "metadata", "labels")).get(ENFORCE)
        if name not in teams or level in SAFE_LEVELS:
            continue
        if any(_enforces_baseline(p) for p in denying_policies(resources, name)):
            continue
        yield Finding(f"team namespace '{name}'", "anyone who may create pods there can run a privileged, hostPID "
                      "or hostNetwork pod and become root on any node it tolerates",
                      observed=f"{ENFORCE}: {level or 'unset'}, and no ValidatingAdmissionPolicy enforcing baseline "
                               "is bound to it with Deny",
                      required="Pod Security baseline or restricted, or a Deny-bound ValidatingAdmissionPolicy that "
                               "enforces baseline (gpu-cluster-fabric-pods)",
                      fix="label the namespace pod-security.kubernetes.io/enforce: baseline; on a GPUDirect pool "
                          "gpu-cluster binds gpu-cluster-fabric-pods to it (render/admission.py)",
                      keys=(name, ns.name, ns.urn), urn=ns.urn)


RULE = register(Rule(
    id=ID, title="Team namespaces admit no privileged pods", category=Category.SECURITY, stack=True,
    description="Namespaces holding a Kueue LocalQueue enforce Pod Security baseline, by label or by a bound "
                "ValidatingAdmissionPolicy.",
    why=("A team namespace runs tenants' code on shared GPU nodes. At Pod Security privileged, a tenant's pod may be "
         "privileged, share the host's PID or network namespace or mount / from the host: root on the node, the "
         "node's cloud credentials, every other team's jobs and data. GPUDirect fabrics need host paths and NET_ADMIN "
         "on one sidecar, which baseline refuses and Pod Security cannot make exceptions for; a "
         "ValidatingAdmissionPolicy can (baseline in CEL plus exactly the fabric's needs)."),
    remediation=("1. Label the namespace pod-security.kubernetes.io/enforce: baseline. 2. Where the fabric needs "
                 "more, keep enforce: privileged only together with a ValidatingAdmissionPolicy enforcing baseline "
                 "plus the fabric's needs, bound by the namespace's kubernetes.io/metadata.name with "
                 "validationActions [Deny] and failurePolicy Fail (gpu-cluster creates gpu-cluster-fabric-pods)."),
    severity=Severity.CRITICAL, enforcement=EnforcementLevel.MANDATORY, applies_to=(NAMESPACE,), check=check,
), order=4140)
