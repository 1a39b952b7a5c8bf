"""The corpus of hostile requests (``policies/hostile_requests.yaml``) and what a stack's admission chain makes of
each, in each team namespace: the tenancy rules' evidence that the policies hold, by running them."""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from policies.admission_cel import Request, refusals, whole_numbers
from policies.rule import Resource
from policies.tenancy import DAEMONSET, name_of, of_type, team_namespaces
from policies.values import as_dict, as_list, dig

CORPUS = Path(__file__).with_name("hostile_requests.yaml")
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
DEVICE_INJECTOR = "device-injector"
FLEET_WORKER = "fleet-worker"
"""An entry made by the fleet manager's token (``kueue-system/multikueue-sa``): tried only where the stack is a fleet
worker and creates that ServiceAccount."""
FLEET_TOKEN = ("kueue-system", "multikueue-sa")
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"


class NotApplicable(Exception):
    """An @-name of the entry does not resolve on this base (no sidecar, no such hostPath)."""


@dataclass(frozen=True)
class Attempt:
    escape: str
    namespace: str
    base: str
    """What the request was made of: ``pod``, the runtime's name, ``object``."""
    refused_by: tuple[str, ...]

    @property
    def admitted(self) -> bool:
        return not self.refused_by


@functools.cache
def corpus() -> dict[str, Any]:
    data = yaml.safe_load(CORPUS.read_text())
    names = [e["escape"] for e in data["escapes"]]
    if len(set(names)) != len(names):
        raise ValueError(f"{CORPUS}: an escape is listed twice")
    return data


def _sidecar_index(pod: dict[str, Any]) -> int:
    for i, c in enumerate(as_list(dig(pod, "spec", "initContainers"))):
        if as_dict(c).get("restartPolicy") == "Always":
            return i
    raise NotApplicable("no sidecar")


def _value(value: Any, pod: dict[str, Any]) -> Any:
    if isinstance(value, str) and value == "@sidecar-name":
        return pod["spec"]["initContainers"][_sidecar_index(pod)]["name"]
    if isinstance(value, str) and value.startswith("@volume:"):
        path = value.removeprefix("@volume:")
        for v in as_list(dig(pod, "spec", "volumes")):
            if dig(v, "hostPath", "path") == path:
                return v["name"]
        raise NotApplicable(f"no hostPath {path}")
    if isinstance(value, dict):
        return {k: _value(v, pod) for k, v in value.items()}
    if isinstance(value, list):
        return [_value(v, pod) for v in value]
    return value


def _apply(pod: dict[str, Any], step: dict[str, Any], context: dict[str, Any]) -> None:
    keys = step["path"].strip("/").split("/")
    target: Any = pod
    for key in keys[:-1]:
        key = str(_sidecar_index(context)) if key == "@sidecar" else "0" if key == "@main" else key
        if key == "@read-only-mount":  # the first read-only mount of the list (a library path)
            key = str(next((i for i, m in enumerate(target) if as_dict(m).get("readOnly")), -1))
            if key == "-1":
                raise NotApplicable("no read-only mount")
        target = target[int(key)] if isinstance(target, list) else target.setdefault(key, {})
    last = keys[-1]
    value = _value(step.get("value"), context)
    if step["op"] == "remove":
        del target[last]
    elif isinstance(target, list):
        target.append(value) if last == "-" else target.__setitem__(int(last), value)
    else:
        if step["op"] == "replace" and last not in target:
            raise NotApplicable(step["path"])
        target[last] = value


def _bases(resources: list[Resource]) -> list[tuple[str, dict[str, Any]]]:
    """(runtime name, its pod) for every Trainer runtime whose pod has hostPath volumes."""
    out = []
    for r in of_type(resources, RUNTIME):
        jobs = as_list(dig(r.props, "spec", "template", "spec", "replicatedJobs"))
        template = as_dict(dig(jobs[0] if jobs else {}, "template", "spec", "template"))
        pod = whole_numbers(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": dict(as_dict(template.get("metadata"))),
                "spec": dict(as_dict(template.get("spec"))),
            }
        )
        if any("hostPath" in as_dict(v) for v in as_list(pod["spec"].get("volumes"))):
            out.append((name_of(r), pod))
    return out


def _request(entry: dict[str, Any], base: dict[str, Any], context: dict[str, Any], namespace: str) -> Request:
    obj = copy.deepcopy(base)
    for step in entry.get("patch", ()):
        _apply(obj, step, context)
    obj = _value(obj, context)
    req = as_dict(entry.get("request"))
    return Request(
        object=obj,
        namespace=namespace,
        operation=req.get("operation", "CREATE"),
        resource=req.get("resource", "pods"),
        user=req.get("user", Request.user),
        old=copy.deepcopy(base) if entry.get("old") == "base" else None,
        options=as_dict(req.get("options")) if req.get("operation") == "DELETE" else None,
    )


def attempts(resources: list[Resource]) -> list[Attempt]:
    """Every applicable entry of the corpus against the stack, in every team namespace (or the entry's own)."""
    data = corpus()
    injector = any(name_of(d) == DEVICE_INJECTOR for d in of_type(resources, DAEMONSET))
    fleet = any(
        (dig(r.props, "metadata", "namespace"), name_of(r)) == FLEET_TOKEN for r in of_type(resources, SERVICE_ACCOUNT)
    )
    fabric = _bases(resources)
    out: list[Attempt] = []
    for ns in sorted(team_namespaces(resources)):  # every namespace: a policy's CEL may read request.namespace
        # a runtime pod is a base where the namespace admits it unchanged (its pool's teams)
        admitted = [(n, p) for n, p in fabric if not refusals(resources, Request(object=p, namespace=ns), True)]
        sidecar = [
            (n, p)
            for n, p in admitted
            if any(as_dict(c).get("restartPolicy") == "Always" for c in as_list(dig(p, "spec", "initContainers")))
        ]
        for entry in data["escapes"]:
            if (
                entry.get("needs") == DEVICE_INJECTOR
                and not injector
                or entry.get("needs") == FLEET_WORKER
                and not fleet
            ):
                continue
            if (
                entry["base"] == "fabric-pod"
                or entry.get("needs") == "sidecar"
                or (entry["base"] == "object" and "@sidecar-name" in str(entry.get("object")))
            ):
                pairs = [(n, p, p) for n, p in (sidecar if entry.get("needs") == "sidecar" else admitted)]
                if entry["base"] == "object":
                    pairs = [("object", entry["object"], p) for _, p in sidecar[:1]]
                elif entry["base"] == "pod":
                    pairs = [("pod", data["pod"], p) for _, p in sidecar[:1]]
            else:
                pairs = [(entry["base"], data["pod"] if entry["base"] == "pod" else entry["object"], {})]
            if ns in as_list(entry.get("unless-namespace")):  # where the request is the namespace's own right
                continue
            for label, base, context in pairs:
                target = entry.get("namespace", ns)
                try:
                    req = _request(entry, base, context, target)
                except NotApplicable:
                    continue
                out.append(Attempt(entry["escape"], target, label, tuple(refusals(resources, req, True))))
    return out
