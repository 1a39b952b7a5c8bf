"""What the API server's admission chain decides for a pod, from the objects a stack creates: Pod Security admission
(the namespace's ``enforce`` label; baseline modelled here in plain Python, independently of the CEL) and every
ValidatingAdmissionPolicy whose binding selects the namespace, its variables and validations evaluated with
cel-python as the API server evaluates them (``object``, ``request``, ``variables``).

A CEL expression that fails to evaluate raises (with ``failurePolicy: Fail`` the API server would refuse the pod,
but a test should hear about a broken expression, not count it as a refusal)."""

from __future__ import annotations

import functools
from typing import Any, Iterable

import celpy

from preview.engine import Recording
from render.pod_security_cel import BASELINE_CAPABILITIES
from tests.support.helm.examples import recording
from tests.support.helm.render import plain

_ENV = celpy.Environment()


@functools.cache
def _program(expr: str) -> Any:
    return _ENV.program(_ENV.compile(expr))


def _eval(expr: str, activation: dict[str, Any]) -> Any:
    result = _program(expr).evaluate(activation)
    if isinstance(result, celpy.CELEvalError):
        raise AssertionError(f"CEL error in {expr!r}: {result}")
    return result


TENANT = "alice@example.com"
"""A team member: what a request is made as unless a test says otherwise."""


def policy_failures(
    policy: dict[str, Any],
    pod: dict[str, Any],
    namespace: str,
    operation: str = "CREATE",
    resource: str = "pods",
    user: str = TENANT,
    old: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> list[str]:
    """Messages of the policy's validations that refuse ``pod`` (any object) in ``namespace``, requested by ``user``;
    ``old``: the object before an UPDATE or the one a DELETE removes (``oldObject``; null otherwise, as the API server
    passes it; on DELETE ``object`` is null); ``options``: the request's options (DeleteOptions on DELETE)."""
    obj = {**pod, "metadata": {**pod.get("metadata", {}), "namespace": namespace}}
    request = {
        "namespace": namespace,
        "operation": operation,
        "userInfo": {"username": user},
        "resource": {"resource": resource.split("/")[0]},
        **({"subResource": resource.split("/")[1]} if "/" in resource else {}),
        **({"options": options} if options is not None else {}),
    }
    activation: dict[str, Any] = {
        "object": celpy.json_to_cel(None if operation == "DELETE" else obj),
        "request": celpy.json_to_cel(request),
        "oldObject": celpy.json_to_cel(old),
    }
    variables: dict[Any, Any] = {}
    for var in policy["spec"].get("variables", []):
        activation["variables"] = celpy.celtypes.MapType(variables)
        variables[celpy.celtypes.StringType(var["name"])] = _eval(var["expression"], activation)
    activation["variables"] = celpy.celtypes.MapType(variables)
    out = []
    for check in policy["spec"]["validations"]:
        ok = _eval(check["expression"], activation)
        if not isinstance(ok, (bool, celpy.celtypes.BoolType)):
            raise AssertionError(f"{check['expression']!r} is not a boolean: {ok!r}")
        if not bool(ok):
            out.append(check["message"])
    return out


def binding_selects(binding: dict[str, Any], namespace: str) -> bool:
    """The binding's namespaceSelector against the namespace's ``kubernetes.io/metadata.name`` label (the only
    label our bindings select on; anything else fails the test loudly)."""
    selector = binding["spec"].get("matchResources", {}).get("namespaceSelector", {})
    assert set(selector) <= {"matchExpressions"}, selector
    for expr in selector.get("matchExpressions", []):
        assert expr["key"] == "kubernetes.io/metadata.name", expr
        inside = namespace in expr["values"]
        if (expr["operator"] == "In") != inside:
            return False
    return True


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod["spec"]
    return [*spec.get("containers", []), *spec.get("initContainers", []), *spec.get("ephemeralContainers", [])]


def psa_baseline_failures(pod: dict[str, Any]) -> list[str]:
    """Pod Security baseline, the checks a GPU pod can trip (written from the Pod Security Standards page, not from
    the CEL): host namespaces, privileged, capabilities, hostPath, host ports."""
    spec, out = pod["spec"], []
    out += [f"{k}=true" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k)]
    out += [f"hostPath volume {v['name']}" for v in spec.get("volumes", []) if "hostPath" in v]
    for c in _containers(pod):
        sc = c.get("securityContext", {})
        if sc.get("privileged"):
            out.append(f"container {c['name']} privileged")
        extra = set(sc.get("capabilities", {}).get("add", [])) - set(BASELINE_CAPABILITIES)
        if extra:
            out.append(f"container {c['name']} adds {sorted(extra)}")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            out.append(f"container {c['name']} host port")
    return out


def _matches(policy: dict[str, Any], operation: str, resource: str) -> bool:
    wildcard = "*/*" if "/" in resource else "*"  # "*": every resource, "*/*": every subresource too
    return any(
        operation in r["operations"]
        and (resource in r["resources"] or wildcard in r["resources"] or "*/*" in r["resources"])
        for r in policy["spec"]["matchConstraints"]["resourceRules"]
    )


def admission_failures(
    objects: Iterable[dict[str, Any]],
    pod: dict[str, Any],
    namespace: str,
    operation: str = "CREATE",
    resource: str = "pods",
    user: str = TENANT,
    old: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> list[str]:
    """Why the admission chain refuses ``pod`` in ``namespace`` (empty: admitted), given the stack's Namespace,
    ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding objects. A namespace the stack does not create
    has no Pod Security label (privileged)."""
    objects = list(objects)
    labels = next(
        (
            o["metadata"].get("labels", {})
            for o in objects
            if o["kind"] == "Namespace" and o["metadata"]["name"] == namespace
        ),
        {},
    )
    level = labels.get("pod-security.kubernetes.io/enforce", "privileged")
    out = (
        [f"Pod Security {level}: {f}" for f in psa_baseline_failures(pod)]
        if level != "privileged" and resource == "pods"
        else []
    )
    policies = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"}
    for b in (o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"):
        if "Deny" not in b["spec"]["validationActions"] or not binding_selects(b, namespace):
            continue
        policy = policies.get(b["spec"]["policyName"])
        assert policy is not None, f"binding {b['metadata']['name']} names a policy the stack does not create"
        if _matches(policy, operation, resource):
            refused = policy_failures(policy, pod, namespace, operation, resource, user, old, options)
            out += [f"{policy['metadata']['name']}: {m}" for m in refused]
    return out


def pod_from_template(template: dict[str, Any]) -> dict[str, Any]:
    """A Pod as a controller would create it from a pod template."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": dict(template.get("metadata", {})),
        "spec": dict(template["spec"]),
    }


# -- the objects of a recorded stack --------------------------------------------------------------------------
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"


def k8s_objects(rec: Recording) -> list[dict[str, Any]]:
    """Every Kubernetes object the stack creates directly, as the API server would receive it."""
    out = []
    for r in rec.resources:
        if not r.type.startswith("kubernetes:") or "helm.sh" in r.type or "kustomize" in r.type:
            continue
        _, api, kind = r.type.split(":")
        obj = plain(r.inputs)
        api_version = api.removeprefix("core/")
        out.append(
            {
                "apiVersion": api_version,
                "kind": kind,
                **{k: v for k, v in obj.items() if k not in ("apiVersion", "kind")},
            }
        )
    return out


def team_pools(objects: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Team namespace -> pools its queues have quota on (ClusterQueue selector + flavors -> flavor node labels)."""
    flavors = {
        o["metadata"]["name"]: o["spec"].get("nodeLabels", {}).get("gpu-cluster/pool")
        for o in objects
        if o["kind"] == "ResourceFlavor"
    }
    out: dict[str, set[str]] = {}
    for cq in (o for o in objects if o["kind"] == "ClusterQueue"):
        ns = cq["spec"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
        pools = {flavors[f["name"]] for g in cq["spec"]["resourceGroups"] for f in g["flavors"]}
        out.setdefault(ns, set()).update(p for p in pools if p)  # a fleet manager's flavors name a GPU model
    return out


def runtime_pods(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Pool -> the pod its torch runtime's JobSet would create (before the TrainJob's image override). Fleet runtimes
    (one per GPU model, no pool label) are in ``fleet_runtime_pods``."""
    return {
        rt["metadata"]["labels"]["gpu-cluster/pool"]: runtime_pod(rt)
        for rt in objects
        if rt["kind"] == "ClusterTrainingRuntime" and "gpu-cluster/pool" in rt["metadata"].get("labels", {})
    }


def fleet_runtime_pods(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Runtime name -> pod, for the fleet-wide runtimes (``fleet-<model>``) a fleet worker or manager installs."""
    return {
        rt["metadata"]["name"]: runtime_pod(rt)
        for rt in objects
        if rt["kind"] == "ClusterTrainingRuntime" and "gpu-cluster/pool" not in rt["metadata"].get("labels", {})
    }


def runtime_pod(runtime: dict[str, Any]) -> dict[str, Any]:
    return pod_from_template(runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"])


def fabric_case(stack: str) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
    """(objects, a team namespace whose pool needs host access, that pool's runtime pod)."""
    objects = k8s_objects(recording(stack))
    pods = runtime_pods(objects)
    for ns, pools in team_pools(objects).items():
        for pool in sorted(pools):
            spec = pods[pool]["spec"]
            if any("hostPath" in v for v in spec.get("volumes", [])):
                return objects, ns, pods[pool]
    raise AssertionError(f"{stack}: no team namespace with a host-access fabric pool")
