"""Install order over a preview's resources (``preview --format json``: each resource's ``urn`` and ``dependsOn``):
what a resource waits for, transitively, so tests can state "A is created before B"."""

from __future__ import annotations

import functools
from typing import Any, Iterable


class Order:
    def __init__(self, resources: Iterable[dict[str, Any]]):
        self.by_urn = {r["urn"]: r for r in resources}

    @functools.cache
    def waits_for(self, urn: str) -> frozenset[str]:
        """Every URN ``urn`` depends on, directly or through its dependencies."""
        out: set[str] = set()
        for dep in self.by_urn[urn].get("dependsOn") or []:
            out.add(dep)
            if dep in self.by_urn:
                out |= self.waits_for(dep)
        return frozenset(out)

    def before(self, first: str, then: str) -> bool:
        return first in self.waits_for(then)

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        return [r for r in self.by_urn.values() if r["type"] == type_]

    def k8s_objects(self) -> list[dict[str, Any]]:
        """Resources that are one Kubernetes object (a ``kubernetes:<group>/<version>:<Kind>`` with metadata)."""
        return [
            r
            for r in self.by_urn.values()
            if r["type"].startswith("kubernetes:")
            and not r["type"].startswith("kubernetes:helm.sh/")
            and "metadata" in r["inputs"]
        ]


def kind_of(resource: dict[str, Any]) -> tuple[str, str]:
    """(API group, Kind) of a Kubernetes resource type token: ``kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue``."""
    _, group_version, kind = resource["type"].split(":")
    group = group_version.rpartition("/")[0]
    return ("" if group == "core" else group), kind
