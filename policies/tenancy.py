"""Readers for the tenancy rules: Kubernetes Namespaces, admission policies and their bindings, NetworkPolicies, and
what a binding covers. Plain functions of the concrete resources (``Resource``); no component knowledge."""

from __future__ import annotations

from typing import Any

from policies.rule import Resource
from policies.values import as_dict, as_list, dig

NAMESPACE = "kubernetes:core/v1:Namespace"
VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
VAP_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
LOCAL_QUEUE_SUFFIX = ":LocalQueue"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
KUSTOMIZE_DIRECTORY = "kubernetes:kustomize/v2:Directory"
NAME_LABEL = "kubernetes.io/metadata.name"
ENFORCE = "pod-security.kubernetes.io/enforce"


def name_of(r: Resource) -> str:
    name = dig(r.props, "metadata", "name")
    return name if isinstance(name, str) else r.name


def of_type(resources: list[Resource], type_: str) -> list[Resource]:
    return [r for r in resources if r.type == type_]


def team_namespaces(resources: list[Resource]) -> set[str]:
    """Namespaces holding a Kueue LocalQueue: where tenants submit jobs."""
    return {
        ns
        for r in resources
        if r.type.startswith("kubernetes:kueue.x-k8s.io/")
        and r.type.endswith(LOCAL_QUEUE_SUFFIX)
        and isinstance(ns := dig(r.props, "metadata", "namespace"), str)
    }


def selects_namespace(binding: Resource, namespace: str | None) -> bool:
    """Whether the binding's ``matchResources.namespaceSelector`` selects ``namespace`` by its name label (None: a
    namespace the stack does not know, e.g. ``default``). Only name-label selectors are trusted (other labels can be
    set by whoever may edit the namespace); a selector on anything else selects nothing here."""
    selector = as_dict(dig(binding.props, "spec", "matchResources", "namespaceSelector"))
    if as_dict(selector.get("matchLabels")):
        labels = as_dict(selector.get("matchLabels"))
        if set(labels) != {NAME_LABEL} or labels[NAME_LABEL] != namespace:
            return False
    for expr in as_list(selector.get("matchExpressions")):
        expr = as_dict(expr)
        values = [v for v in as_list(expr.get("values")) if isinstance(v, str)]
        if expr.get("key") != NAME_LABEL:
            return False
        if expr.get("operator") == "In" and namespace not in values:
            return False
        if expr.get("operator") == "NotIn" and namespace in values:
            return False
        if expr.get("operator") not in ("In", "NotIn"):
            return False
    return True


def denying_policies(resources: list[Resource], namespace: str | None) -> list[Resource]:
    """The ValidatingAdmissionPolicies of the stack that refuse requests in ``namespace``: bound with ``Deny``,
    failing closed (``failurePolicy`` Fail, the default)."""
    policies = {
        name_of(p): p for p in of_type(resources, VAP) if dig(p.props, "spec", "failurePolicy") in (None, "Fail")
    }
    out = []
    for b in of_type(resources, VAP_BINDING):
        if "Deny" in as_list(dig(b.props, "spec", "validationActions")) and selects_namespace(b, namespace):
            policy = policies.get(dig(b.props, "spec", "policyName"))
            if policy is not None:
                out.append(policy)
    return out


def expressions(policy: Resource) -> str:
    """Every CEL expression of the policy, joined (variables and validations)."""
    spec = as_dict(policy.props.get("spec"))
    return "\n".join(
        str(as_dict(x).get("expression", "")) for x in as_list(spec.get("variables")) + as_list(spec.get("validations"))
    )


def default_deny_ingress(resources: list[Resource], namespace: str) -> Resource | None:
    """A NetworkPolicy of ``namespace`` selecting every pod for Ingress with no rule (deny all not allowed by
    another policy)."""
    for r in of_type(resources, NETWORK_POLICY):
        spec = as_dict(r.props.get("spec"))
        if (
            dig(r.props, "metadata", "namespace") == namespace
            and not as_dict(spec.get("podSelector"))
            and "Ingress" in as_list(spec.get("policyTypes"))
            and not as_list(spec.get("ingress"))
        ):
            return r
    return None


def directory_of(r: Resource) -> str:
    value: Any = r.props.get("directory")
    return value if isinstance(value, str) else ""
