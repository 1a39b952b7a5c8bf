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
    INJECTOR_NAME, INSTALLER_NAMES, NEEDS_INJECTOR, device_injector, installer, nccl_config, network, param_set,
)
from components.gke.fabric_networks import Attachment, GkeFabricNetworks
from plan.facts import PoolFacts


def node_network_config(attachments: Sequence[Attachment]) -> dict:
    """The node pool's ``network_config``: one additional node network per extra NIC, in NIC order."""
    return {"additional_node_network_configs": [{"network": a.network, "subnetwork": a.subnetwork}
                                                for a in attachments]}


def managed_network_config(profile: str) -> dict:
    """GKE-managed accelerator networking: GKE creates the VPCs, subnets and node NICs (pulumi-gcp 10.2.0
    ``NodePoolNetworkConfig.accelerator_network_profile``; the API's only value is ``auto``)."""
    return {"accelerator_network_profile": profile}


def fabric_kinds(pools: Sequence[PoolFacts]) -> dict[FabricKind, list[PoolFacts]]:
    """GKE fabric pools by kind, in spec order (EFA is EKS's, handled by the node group)."""
    out: dict[FabricKind, list[PoolFacts]] = {}
    for p in pools:
        if p.fabric is not None and p.fabric.kind != FabricKind.EFA:
            out.setdefault(p.fabric.kind, []).append(p)
    return out


class GkeFabric(pulumi.ComponentResource):
    """Everything the cluster's fabric pools share. ``opts`` carries the GCP and the cluster's Kubernetes providers;
    Kubernetes objects wait for ``after`` (the cluster)."""

    node_network_configs: dict[str, dict]
    """Pool name -> its node pool ``network_config``."""
    daemonsets: list[str]

    def __init__(self, name: str, pools: Sequence[PoolFacts], cluster_name: str, project: str, region: str,
                 after: Sequence[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-cluster:gcp:GkeFabric", name, None, opts)
        fab = load_fabric_catalog()
        child = pulumi.ResourceOptions(parent=self)
        k8s_opts = pulumi.ResourceOptions(parent=self, depends_on=list(after))
        self.node_network_configs, self.daemonsets = {}, []
        by_kind = fabric_kinds(pools)
        for kind, members in by_kind.items():
            attached = [p for p in members if p.fabric is not None and not p.fabric.managed]
            for p in members:
                if p.fabric is not None and p.fabric.managed:
                    self.node_network_configs[p.name] = managed_network_config(p.fabric.machine.gke_managed_profile)
            if attached:
                plan = attached[0].fabric
                assert plan is not None
                nets = GkeFabricNetworks(f"{name}-{kind.value}", plan, cluster_name, project, region,
                                         attached[0].zones[0], opts=child)
                for a in nets.attachments:
                    custom_resource(f"{name}-{a.plan.k8s_name}-params",
                                    param_set(a.plan.k8s_name, a.network, a.subnetwork, a.plan.device_mode), k8s_opts)
                    custom_resource(f"{name}-{a.plan.k8s_name}-network", network(a.plan.k8s_name), k8s_opts)
                for p in attached:
                    self.node_network_configs[p.name] = node_network_config(nets.attachments)
            for arch in dict.fromkeys(p.arch for p in members):  # one installer per CPU architecture
                names = [p.name for p in members if p.arch == arch]
                obj = installer(kind, names, fab, arch)
                suffix = "-arm64" if arch == "arm64" else ""
                custom_resource(f"{name}-{INSTALLER_NAMES[kind]}{suffix}", obj, k8s_opts)
                self.daemonsets.append(obj["metadata"]["name"])
            if kind == FabricKind.TCPX:
                cm = nccl_config()
                k8s.core.v1.ConfigMap(f"{name}-nccl-config", metadata=cm["metadata"], data=cm["data"], opts=k8s_opts)
        injected = sorted(p.name for k in NEEDS_INJECTOR for p in by_kind.get(k, []))
        if injected:
            kind = next(k for k in NEEDS_INJECTOR if k in by_kind)
            custom_resource(f"{name}-{INJECTOR_NAME}", device_injector(injected, fab, kind), k8s_opts)
            self.daemonsets.append(INJECTOR_NAME)
        self.register_outputs({"daemonSets": self.daemonsets, "pools": sorted(self.node_network_configs)})
