"""Whether NetworkPolicies let a connection in, as Kubernetes defines it (written from the NetworkPolicy API
reference): a pod selected by no Ingress policy accepts everything; a selected pod accepts a connection that some
selecting policy's ingress rule allows (``from`` empty = any source; ``ports`` empty = any port). Selectors support
``matchLabels`` and ``matchExpressions`` (In / NotIn / Exists), enough for the policies the stack creates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Peer:
    namespace: str
    labels: dict[str, str]
    namespace_labels: dict[str, str] | None = None

    @property
    def ns_labels(self) -> dict[str, str]:
        return {"kubernetes.io/metadata.name": self.namespace, **(self.namespace_labels or {})}


def selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        op, key, values = e["operator"], e["key"], e.get("values", [])
        if (
            (op == "In" and labels.get(key) not in values)
            or (op == "NotIn" and labels.get(key) in values)
            or (op == "Exists" and key not in labels)
        ):
            return False
    return True


def _peer_allowed(rule_from: list[dict[str, Any]] | None, src: Peer, dst_namespace: str) -> bool:
    if not rule_from:
        return True
    for peer in rule_from:
        if "ipBlock" in peer:
            continue  # pod-to-pod traffic is judged by the selectors
        ns_ok = (
            selects(peer["namespaceSelector"], src.ns_labels)
            if "namespaceSelector" in peer
            else src.namespace == dst_namespace
        )
        pod_ok = selects(peer.get("podSelector"), src.labels) if "podSelector" in peer else True
        if ns_ok and pod_ok:
            return True
    return False


def ingress_allowed(policies: Iterable[dict[str, Any]], src: Peer, dst: Peer, port: int) -> bool:
    selecting = [
        p
        for p in policies
        if p["metadata"]["namespace"] == dst.namespace
        and "Ingress" in p["spec"].get("policyTypes", ["Ingress"])
        and selects(p["spec"].get("podSelector"), dst.labels)
    ]
    if not selecting:
        return True
    for p in selecting:
        for rule in p["spec"].get("ingress") or []:
            ports = rule.get("ports") or []
            if ports and not any(q.get("port") == port for q in ports):
                continue
            if _peer_allowed(rule.get("from"), src, dst.namespace):
                return True
    return False
