"""Deploy-time advice the offline preview adds to a valid spec: true for every stack like it, so not a spec rule."""
from __future__ import annotations

from catalog import Catalog, Cloud, GpuDirect
from validation.issues import SpecIssue, path_of
from stacks.spec import ClusterMode, StackSpec

GPUDIRECT_NAMES = {GpuDirect.TCPX: "GPUDirect-TCPX (4 extra NICs)", GpuDirect.TCPXO: "GPUDirect-TCPXO (8 extra NICs)",
                   GpuDirect.RDMA: "GPUDirect RDMA (8 ConnectX-7 NICs)"}


def deploy_advice(spec: StackSpec, cat: Catalog) -> list[SpecIssue]:
    advice = []
    if spec.cluster.mode == ClusterMode.CREATE and not spec.cluster.authorized_networks:
        advice.append(SpecIssue(
            path_of("cluster", "authorizedNetworks"),
            "the new cluster's Kubernetes API gets a private endpoint only: `pulumi up` must run from inside the VPC "
            "to install the GPU runtime and scheduler", [], "your office or VPN CIDRs, e.g. 203.0.113.0/24",
            "add the range `pulumi up` runs from, or run it from a host inside the VPC", warning=True))
    if spec.cloud == Cloud.GCP:
        for i, pool in enumerate(spec.node_pools):
            machine = cat.machines.get((Cloud.GCP, pool.machine_type))
            if pool.multi_node and machine is not None and machine.gpudirect in GPUDIRECT_NAMES:
                advice.append(SpecIssue(
                    path_of("nodePools", i, "multiNode"),
                    f"{pool.machine_type} is built for {GPUDIRECT_NAMES[machine.gpudirect]}, which gpu-cluster does "
                    "not set up yet (extra VPCs, GKE multi-networking, the NCCL plugin): traffic between nodes uses "
                    "the primary NIC only", True, "GPUDirect networks you create yourself",
                    "add the GPUDirect networks as the GKE GPUDirect guide describes, or expect lower multi-node "
                    "bandwidth", warning=True))
    return advice
