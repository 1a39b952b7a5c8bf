"""The pre-pull DaemonSets of the pools that ask for one (``podStart.prepull``), in their own restricted namespace."""

from __future__ import annotations

from typing import Sequence

import pulumi

from components.k8s.network_policies import system_network_policies
from components.k8s.custom_resources import custom_resource, namespace
from render.image_prepull import daemonset_name, prepull_daemonset, prepull_namespace
from stacks.plan.facts import PoolFacts


class ImagePrepull(pulumi.ComponentResource):
    """One DaemonSet per pool (``prepull-<pool>``) pulling the pool's declared images onto each new node."""

    daemonsets: list[str]

    def __init__(
        self, name: str, pools: Sequence[tuple[PoolFacts, Sequence[str]]], opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("gpu-cluster:k8s:ImagePrepull", name, None, opts)
        ns_obj = prepull_namespace()
        ns = namespace(f"{name}-namespace", ns_obj, pulumi.ResourceOptions(parent=self))
        system_network_policies(name, ns_obj["metadata"]["name"], ns, self)
        child = pulumi.ResourceOptions(parent=self, depends_on=[ns])
        self.daemonsets = []
        for facts, images in pools:
            custom_resource(f"{name}-{facts.name}", prepull_daemonset(facts, images), child)
            self.daemonsets.append(daemonset_name(facts.name))
        self.register_outputs({"daemonSets": self.daemonsets, "namespace": ns_obj["metadata"]["name"]})
