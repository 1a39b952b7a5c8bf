"""security-team-namespace-admission: in every team namespace (one holding a Kueue LocalQueue) the stack's own
admission chain refuses every hostile request of the corpus (``policies/hostile_requests.yaml``): Pod Security
labels and Deny-bound ValidatingAdmissionPolicies, their CEL evaluated on each request (``policies/hostile.py``).
No keyword matching: a policy counts for what it refuses."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.hostile import attempts
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.tenancy import ENFORCE, NAMESPACE, name_of, of_type
from policies.values import as_dict, dig

ID = "security-team-namespace-admission"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    admitted: dict[str, list[str]] = {}
    for a in attempts(resources):
        if a.admitted:
            where = "" if a.base in ("pod", "object") else f" (as the runtime {a.base}'s pod)"
            admitted.setdefault(a.namespace, []).append(a.escape + where)
    for ns in of_type(resources, NAMESPACE):
        name = name_of(ns)
        if name not in admitted:
            continue
        escapes = list(dict.fromkeys(admitted.pop(name)))
        level = as_dict(dig(ns.props, "metadata", "labels")).get(ENFORCE)
        yield Finding(
            f"team namespace '{name}'",
            "the stack's admission chain admits requests a tenant makes to "
            "escape its lane (root on a node, GPUs outside quota)",
            observed=f"{ENFORCE}: {level or 'unset'}; admitted: " + "; ".join(escapes),
            required="every hostile request of policies/hostile_requests.yaml refused by Pod Security "
            "baseline or a ValidatingAdmissionPolicy bound to the namespace with Deny (CEL "
            "evaluated)",
            fix="label the namespace pod-security.kubernetes.io/enforce: baseline; on a GPUDirect pool "
            "keep gpu-cluster-fabric-pods and gpu-cluster-fabric-exec bound to it "
            "(render/admission.py), and gpu-cluster-quota on every team namespace "
            "(render/quota_admission.py)",
            keys=(name, ns.name, ns.urn),
            urn=ns.urn,
        )


RULE = register(
    Rule(
        id=ID,
        title="Team namespaces refuse every known escape",
        category=Category.SECURITY,
        stack=True,
        description="The stack's own admission policies, evaluated on a corpus of hostile requests, refuse each of them "
        "in every namespace holding a Kueue LocalQueue.",
        why=(
            "A team namespace runs tenants' code on shared GPU nodes. A privileged or host-namespace pod, a host path, "
            "code run inside the GPU fabric's NET_ADMIN sidecar (probes, hooks, LD_PRELOAD, a ConfigMap over its "
            "binary), exec into it, or a pod Kueue never gates (a forged owner, its gate removed, a job unsuspended) "
            "is root on a node or GPUs outside quota. A policy whose text names the right fields can still admit all "
            "of these: only running its CEL on the requests shows what it refuses."
        ),
        remediation=(
            "1. Label the namespace pod-security.kubernetes.io/enforce: baseline. 2. Where the fabric needs "
            "more, keep enforce: privileged only with gpu-cluster-fabric-pods and gpu-cluster-fabric-exec bound "
            "by the namespace's kubernetes.io/metadata.name with validationActions [Deny] and failurePolicy "
            "Fail. 3. Keep gpu-cluster-quota bound to every team namespace. The finding names each admitted "
            "request by the escape it tries (policies/hostile_requests.yaml)."
        ),
        severity=Severity.CRITICAL,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(NAMESPACE,),
        check=check,
    ),
    order=4140,
)
