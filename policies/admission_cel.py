"""What the API server's admission chain decides for one request in one namespace, from the stack's own objects:
Pod Security admission (the namespace's ``enforce`` label, baseline's checks a GPU pod can trip) and every
ValidatingAdmissionPolicy bound to the namespace with ``Deny``, its CEL run by cel-python (``object``,
``oldObject``, ``request``, ``variables``) as the API server runs it. Used by the tenancy rules to prove a stack's
policies refuse the hostile requests of ``policies/hostile_requests.yaml``; no keyword matching.

An expression that fails to evaluate refuses the request, as with ``failurePolicy: Fail``; a policy with
``failurePolicy: Ignore`` or a binding without ``Deny`` refuses nothing."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import celpy

from policies.rule import Resource
from policies.tenancy import ENFORCE, NAMESPACE, VAP, VAP_BINDING, name_of, of_type, selects_namespace
from policies.values import as_dict, as_list, dig
from stacks.plan.host_access import BASELINE_CAPABILITIES

_ENV = celpy.Environment()
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
"""Pod Security Standards, baseline, "Sysctls": the safe subset (Kubernetes 1.29+)."""


@dataclass(frozen=True)
class Request:
    object: dict[str, Any]
    namespace: str
    operation: str = "CREATE"
    resource: str = "pods"
    """``pods``, ``pods/exec``, ``jobs`` ...: resource and subresource."""
    user: str = "alice@example.com"
    old: dict[str, Any] | None = None
    options: dict[str, Any] | None = None
    """The request's options (DeleteOptions on DELETE, where ``object`` is null and ``old`` the object deleted)."""
    groups: tuple[str, ...] = field(default=("system:authenticated",))


def whole_numbers(value: Any) -> Any:
    """Props carry numbers as floats; the API server's objects carry integers where the schema says so."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return value


@functools.cache
def _program(expr: str) -> Any:
    return _ENV.program(_ENV.compile(expr))


def _eval(expr: str, activation: dict[str, Any]) -> Any:
    """The expression's value, or None when it fails to compile or evaluate."""
    try:
        out = _program(expr).evaluate(activation)
    except Exception:  # noqa: BLE001 - cel-python raises several types; any failure refuses, as failurePolicy Fail
        return None
    return None if isinstance(out, celpy.CELEvalError) else out


def policy_refusals(policy: dict[str, Any], req: Request, first: bool = False) -> list[str]:
    """Messages of the policy's validations that refuse ``req`` (the request must match its rules); ``first``: stop
    at the first (the request is refused; cel-python is slow, and the pack only needs the verdict)."""
    obj = {**req.object, "metadata": {**as_dict(req.object.get("metadata")), "namespace": req.namespace}}
    resource, _, sub = req.resource.partition("/")
    request = {
        "namespace": req.namespace,
        "operation": req.operation,
        "resource": {"resource": resource},
        "userInfo": {"username": req.user, "groups": list(req.groups)},
        **({"subResource": sub} if sub else {}),
        **({"options": req.options} if req.options is not None else {}),
    }
    activation: dict[str, Any] = {
        "object": celpy.json_to_cel(None if req.operation == "DELETE" else obj),
        "request": celpy.json_to_cel(request),
        "oldObject": celpy.json_to_cel(req.old),
    }
    variables: dict[Any, Any] = {}
    spec = as_dict(policy.get("spec"))
    for var in as_list(spec.get("variables")):
        activation["variables"] = celpy.celtypes.MapType(variables)
        value = _eval(str(as_dict(var).get("expression")), activation)
        if value is None:
            return [f"variable {as_dict(var).get('name')} fails to evaluate"]
        variables[celpy.celtypes.StringType(str(as_dict(var).get("name")))] = value
    activation["variables"] = celpy.celtypes.MapType(variables)
    out = []
    for check in (as_dict(c) for c in as_list(spec.get("validations"))):
        ok = _eval(str(check.get("expression")), activation)
        if not isinstance(ok, (bool, celpy.celtypes.BoolType)) or not bool(ok):
            out.append(str(check.get("message") or check.get("expression")))
            if first:
                break
    return out


def _matches(policy: dict[str, Any], req: Request) -> bool:
    rules = as_list(dig(policy, "spec", "matchConstraints", "resourceRules"))
    wildcards = ("*/*",) if "/" in req.resource else ("*", "*/*")  # "*/*" also matches subresources
    return any(
        req.operation in as_list(as_dict(r).get("operations"))
        and (
            req.resource in as_list(as_dict(r).get("resources"))
            or any(w in as_list(as_dict(r).get("resources")) for w in wildcards)
        )
        for r in rules
    )


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = as_dict(pod.get("spec"))
    return [
        as_dict(c) for key in ("containers", "initContainers", "ephemeralContainers") for c in as_list(spec.get(key))
    ]


def baseline_refusals(pod: dict[str, Any]) -> list[str]:
    """Pod Security baseline's checks a GPU pod can trip (the Pod Security Standards page): host namespaces,
    hostPath, sysctls, seccomp, privileged, capabilities, host ports."""
    spec, out = as_dict(pod.get("spec")), []
    out += [f"{k}" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k)]
    out += [f"hostPath volume {as_dict(v).get('name')}" for v in as_list(spec.get("volumes")) if "hostPath" in v]
    psc = as_dict(spec.get("securityContext"))
    out += [
        f"sysctl {as_dict(s).get('name')}"
        for s in as_list(psc.get("sysctls"))
        if as_dict(s).get("name") not in SAFE_SYSCTLS
    ]
    if dig(psc, "seccompProfile", "type") == "Unconfined":
        out.append("seccomp Unconfined")
    for c in _containers(pod):
        sc = as_dict(c.get("securityContext"))
        if sc.get("privileged"):
            out.append(f"privileged container {c.get('name')}")
        if set(as_list(dig(sc, "capabilities", "add"))) - set(BASELINE_CAPABILITIES):
            out.append(f"capabilities of {c.get('name')}")
        if any(as_dict(p).get("hostPort") for p in as_list(c.get("ports"))):
            out.append(f"host port of {c.get('name')}")
        if dig(sc, "seccompProfile", "type") == "Unconfined":
            out.append(f"seccomp Unconfined in {c.get('name')}")
    return out


def refusals(resources: list[Resource], req: Request, first: bool = False) -> list[str]:
    """Why the stack's admission chain refuses ``req`` (empty: admitted); ``first``: only the first reason. A
    namespace the stack does not create has no Pod Security label (privileged)."""
    labels = next(
        (
            as_dict(dig(n.props, "metadata", "labels"))
            for n in of_type(resources, NAMESPACE)
            if name_of(n) == req.namespace
        ),
        {},
    )
    out = []
    if labels.get(ENFORCE) in ("baseline", "restricted") and req.resource in ("pods", "pods/ephemeralcontainers"):
        out += [f"Pod Security {labels[ENFORCE]}: {r}" for r in baseline_refusals(req.object)]
        if out and first:
            return out[:1]
    policies = {
        name_of(p): whole_numbers(p.props)
        for p in of_type(resources, VAP)
        if dig(p.props, "spec", "failurePolicy") in (None, "Fail")
    }
    for b in of_type(resources, VAP_BINDING):
        if "Deny" not in as_list(dig(b.props, "spec", "validationActions")) or not selects_namespace(b, req.namespace):
            continue
        policy = policies.get(str(dig(b.props, "spec", "policyName")))
        if policy is not None and _matches(policy, req):
            out += [f"{policy['metadata']['name']}: {m}" for m in policy_refusals(policy, req, first)]
            if out and first:
                return out[:1]
    return out
