"""The NVIDIA DRA driver for ComputeDomains on rack-scale NVLink pools (GB200 NVL72), and the ComputeDomains whose
IMEX channels the pools' jobs claim (``render/compute_domain.py``)."""

from __future__ import annotations

from typing import Any, Sequence

import pulumi
import pulumi_kubernetes as k8s

from catalog import Cloud
from components.k8s.network_policies import system_network_policies
from components.charts import NVIDIA_DRA_DRIVER
from components.k8s.custom_resources import custom_resource
from components.k8s.objects import critical_pods_quota, privileged_namespace
from components.image_digests import pinned_chart_values
from render.nvidia_dra_values import NAMESPACE, dra_driver_values
from render.nvidia_values import critical_pods_budget
from stacks.plan.facts import PoolFacts


class NvidiaDraDriver(pulumi.ComponentResource):
    """Installs the pinned driver chart (``helm.v3.Release``, so policies read its values; its CRDs come with it) in a
    privileged namespace (the kubelet plugin and IMEX daemons are privileged; on GKE with a quota admitting
    system-node-critical pods), then each ComputeDomain once the release (its CRD) and the domain's namespace
    exist. ``namespaces``: namespace name -> the resource creating it (the team namespaces, the Slurm namespace)."""

    release: k8s.helm.v3.Release
    compute_domains: list[str]
    """``<namespace>/<name>`` of every ComputeDomain."""

    def __init__(
        self,
        name: str,
        cloud: Cloud,
        pools: Sequence[PoolFacts],
        domains: Sequence[dict[str, Any]],
        namespaces: dict[str, pulumi.Resource],
        after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:k8s:NvidiaDraDriver", name, None, opts)
        ns = privileged_namespace(f"{name}-ns", NAMESPACE, parent=self, after=list(after))
        system_network_policies(name, NAMESPACE, ns, self)
        before: list[pulumi.Resource] = [ns]
        if cloud == Cloud.GCP:
            before.append(critical_pods_quota(f"{name}-quota", ns, critical_pods_budget(pools), parent=self))
        pin = NVIDIA_DRA_DRIVER
        self.release = k8s.helm.v3.Release(
            name,
            name=pin.chart,
            chart=f"{pin.repo}/{pin.chart}",
            version=pin.version,
            namespace=ns.metadata.name,
            create_namespace=False,
            values=pinned_chart_values(pin.chart, pin.version, dra_driver_values(cloud, pools)),
            timeout=900,
            opts=pulumi.ResourceOptions(parent=self, depends_on=before),
        )
        self.compute_domains = []
        for obj in domains:
            meta = obj["metadata"]
            waits = [self.release, *([namespaces[meta["namespace"]]] if meta["namespace"] in namespaces else [])]
            custom_resource(
                f"{name}-cd-{meta['namespace']}-{meta['name']}",
                obj,
                pulumi.ResourceOptions(parent=self, depends_on=waits),
            )
            self.compute_domains.append(f"{meta['namespace']}/{meta['name']}")
        self.register_outputs({"computeDomains": self.compute_domains, "pools": [p.name for p in pools]})
