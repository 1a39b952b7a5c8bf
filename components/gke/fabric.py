"""GPU fabric of a GKE cluster: per fabric kind its networks, a ``GKENetworkParamSet`` + ``Network`` per extra
network, the NCCL plugin installer, and (TCPX/TCPXO) the NRI device injector. Node pools attach the networks through
``network_config.additional_node_network_configs`` (``node_network_config`` below); the cluster turns on
multi-networking (``enable_multi_networking``, which Dataplane V2 allows). Pools in fabric mode ``managed`` get
``network_config.accelerator_network_profile`` instead: GKE creates and attaches their networks, so nothing here
creates networks or Network objects for them; the NCCL plugin installer still runs on their nodes."""

from __future__ import annotations

from typing import Sequence

import pulumi
import pulumi_kubernetes as k8s

from catalog.fabric import FabricKind, load_fabric_catalog
from components.k8s.custom_resources import custom_resource
from render.gke_fabric_manifests import (
    INJECTOR_NAME,
    INSTALLER_NAMES,
    NEEDS_INJECTOR,
    device_injector,
    installer,
    nccl_config,
    network,
    param_set,
)
from components.gke.fabric_networks import Attachment, GkeFabricNetworks
from stacks.plan.gke_fabric import FabricKindPlan


def node_network_config(attachments: Sequence[Attachment]) -> dict:
    """The node pool's ``network_config``: one additional node network per extra NIC, in NIC order."""
    return {
        "additional_node_network_configs": [{"network": a.network, "subnetwork": a.subnetwork} for a in attachments]
    }


def managed_network_config(profile: str) -> dict:
    """GKE-managed accelerator networking: GKE creates the VPCs, subnets and node NICs (pulumi-gcp 10.2.0
    ``NodePoolNetworkConfig.accelerator_network_profile``; the API's only value is ``auto``)."""
    return {"accelerator_network_profile": profile}


class GkeFabric(pulumi.ComponentResource):
    """Everything the cluster's fabric pools share. ``opts`` carries the GCP and the cluster's Kubernetes providers;
    Kubernetes objects wait for ``after`` (the cluster)."""

    node_network_configs: dict[str, dict]
    """Pool name -> its node pool ``network_config``."""
    daemonsets: list[str]

    def __init__(
        self,
        name: str,
        kinds: Sequence[FabricKindPlan],
        cluster_name: str,
        project: str,
        region: str,
        after: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """``kinds``: the plan's GKE fabric, grouped by kind (``stacks/plan/gke_fabric.py``)."""
        super().__init__("gpu-cluster:gcp:GkeFabric", name, None, opts)
        fab = load_fabric_catalog()
        child = pulumi.ResourceOptions(parent=self)
        k8s_opts = pulumi.ResourceOptions(parent=self, depends_on=list(after))
        self.node_network_configs, self.daemonsets = {}, []
        for group in kinds:
            kind = group.kind
            for pool, profile in group.managed.items():
                self.node_network_configs[pool] = managed_network_config(profile)
            if group.networks is not None and group.zone is not None:
                nets = GkeFabricNetworks(
                    f"{name}-{kind.value}", group.networks, cluster_name, project, region, group.zone, opts=child
                )
                for a in nets.attachments:
                    custom_resource(
                        f"{name}-{a.plan.k8s_name}-params",
                        param_set(a.plan.k8s_name, a.network, a.subnetwork, a.plan.device_mode),
                        k8s_opts,
                    )
                    custom_resource(f"{name}-{a.plan.k8s_name}-network", network(a.plan.k8s_name), k8s_opts)
                for pool in group.attached:
                    self.node_network_configs[pool] = node_network_config(nets.attachments)
            for arch, names, nics in group.installers:  # one installer per CPU architecture
                obj = installer(kind, list(names), fab, arch, rdma_nics=nics)
                suffix = "-arm64" if arch == "arm64" else ""
                custom_resource(f"{name}-{INSTALLER_NAMES[kind]}{suffix}", obj, k8s_opts)
                self.daemonsets.append(obj["metadata"]["name"])
            if kind == FabricKind.TCPX:
                cm = nccl_config()
                k8s.core.v1.ConfigMap(f"{name}-nccl-config", metadata=cm["metadata"], data=cm["data"], opts=k8s_opts)
        by_kind = {g.kind: g for g in kinds}
        injected = sorted(p for k in NEEDS_INJECTOR if k in by_kind for p in by_kind[k].pools)
        if injected:
            kind = next(k for k in NEEDS_INJECTOR if k in by_kind)
            custom_resource(f"{name}-{INJECTOR_NAME}", device_injector(injected, fab, kind), k8s_opts)
            self.daemonsets.append(INJECTOR_NAME)
        self.register_outputs({"daemonSets": self.daemonsets, "pools": sorted(self.node_network_configs)})
