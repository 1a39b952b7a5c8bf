"""The system namespaces' NetworkPolicies (``render/system_network_policies.py``) against what the pinned charts
really render with our values (real Helm, every example stack): every port of every Service in those namespaces
has an allow for the pods it selects (health ports excepted: the kubelet probes from the node), every admission
webhook's and APIService's port is open to the API server, and every allow selects pods some chart renders (no
dead rule). The generated objects validate against the Kubernetes schema."""

from __future__ import annotations

import functools
from typing import Any

import kubernetes_validate
import pytest

from render.system_network_policies import SYSTEM_NAMESPACES, Source, system_namespace_policies
from tests.support.helm.examples import rendered
from tests.support.helm.render import release_calls
from tests.support.kube.schema import K8S_VERSION
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS

HEALTH_PORTS = {8081}
"""Probe ports: the kubelet calls them from the node (not subject to NetworkPolicy)."""
RUNTIME_ONLY = {("gpu-operator", "metrics-from-scrapers-dcgm")}
"""Allows for pods an operator creates at run time (not in any chart render)."""
WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet")


@functools.cache
def _objects() -> list[tuple[str, str, dict[str, Any]]]:
    """(stack, namespace, object) for every object any example's releases render into a system namespace."""
    out = []
    for stack in EXAMPLE_STACKS:
        st = rendered(stack)
        ns = {c.resource: c.namespace for c in release_calls(st.rec)}
        out += [
            (stack, o.get("metadata", {}).get("namespace") or ns[rel], o)
            for rel, objs in st.releases.items()
            for o in objs
        ]
    return out


def _pods(namespace: str, selector: dict[str, str]) -> list[tuple[dict, dict]]:
    """(pod labels, pod spec) of the workloads in ``namespace`` a selector matches."""
    return [
        (o["spec"]["template"]["metadata"].get("labels", {}), o["spec"]["template"]["spec"])
        for _, ns, o in _objects()
        if ns == namespace
        and o["kind"] in WORKLOADS
        and selector.items() <= o["spec"]["template"]["metadata"].get("labels", {}).items()
    ]


def _container_port(spec: dict, target: int | str) -> int:
    if isinstance(target, int):
        return target
    return next(p["containerPort"] for c in spec["containers"] for p in c.get("ports", []) if p.get("name") == target)


def _allowed(namespace: str, labels: dict, port: int, source: Source | None = None) -> bool:
    return any(
        a.selector.items() <= labels.items() and port in a.ports and (source is None or a.source == source)
        for a in SYSTEM_NAMESPACES[namespace].allows
    )


def _services() -> list[tuple[str, str, dict]]:
    return [(s, ns, o) for s, ns, o in _objects() if o["kind"] == "Service" and ns in SYSTEM_NAMESPACES]


def test_every_service_port_in_a_system_namespace_has_an_allow():
    checked = 0
    for stack, ns, svc in _services():
        pods = _pods(ns, svc["spec"].get("selector", {}))
        assert pods, f"{stack}: Service {ns}/{svc['metadata']['name']} selects no rendered pod"
        for port in svc["spec"]["ports"]:
            for labels, spec in pods:
                target = _container_port(spec, port.get("targetPort", port["port"]))
                if target in HEALTH_PORTS:
                    continue
                checked += 1
                assert _allowed(ns, labels, target), (
                    f"{stack}: {ns}/{svc['metadata']['name']} port {port.get('name')} -> {target}: no allow"
                )
    assert checked >= 10, checked  # kueue, trainer, jobset, slinky services at least


def test_every_webhook_and_api_service_is_open_to_the_api_server():
    checked = 0
    for stack, _, obj in _objects():
        if obj["kind"] in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
            refs = [w["clientConfig"].get("service") for w in obj["webhooks"]]
        elif obj["kind"] == "APIService":
            refs = [obj["spec"].get("service")]
        else:
            continue
        for ref in filter(None, refs):
            if ref["namespace"] not in SYSTEM_NAMESPACES:
                continue
            svc = next(o for _, ns, o in _services() if ns == ref["namespace"] and o["metadata"]["name"] == ref["name"])
            port = next(p for p in svc["spec"]["ports"] if p["port"] == ref.get("port", 443))
            for labels, spec in _pods(ref["namespace"], svc["spec"]["selector"]):
                checked += 1
                target = _container_port(spec, port.get("targetPort", port["port"]))
                assert _allowed(ref["namespace"], labels, target, Source.API_SERVER), (
                    f"{stack}: {obj['metadata']['name']} -> {ref}: port {target} not open to the API server"
                )
    assert checked >= 4, checked


@pytest.mark.parametrize("namespace", sorted(SYSTEM_NAMESPACES))
def test_every_allow_selects_rendered_pods_and_the_policies_are_valid(namespace):
    for allow in SYSTEM_NAMESPACES[namespace].allows:
        if (namespace, allow.name) in RUNTIME_ONLY:
            continue
        pods = _pods(namespace, allow.selector)
        assert pods, f"{namespace}/{allow.name} selects no rendered pod"
    policies = system_namespace_policies(namespace, ["research", "product-ml"])
    assert policies[0]["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}  # default deny
    for p in policies:
        kubernetes_validate.validate(p, K8S_VERSION, strict=True)


def test_teams_reach_the_trainer_status_server_only_when_there_are_teams():
    names = {p["metadata"]["name"]: p for p in system_namespace_policies("kubeflow-system", ["research"])}
    peers = names["trainer-status-from-teams"]["spec"]["ingress"][0]["from"]
    assert peers[0]["namespaceSelector"]["matchExpressions"][0]["values"] == ["research"]
    assert "trainer-status-from-teams" not in {
        p["metadata"]["name"] for p in system_namespace_policies("kubeflow-system", [])
    }
    webhook = names["trainer-webhook-from-api-server"]["spec"]["ingress"][0]
    assert "from" not in webhook and webhook["ports"] == [{"protocol": "TCP", "port": 9443}]
