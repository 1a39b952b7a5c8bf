"""Cloud Router + Cloud NAT: outbound internet for private GKE nodes (images from nvcr.io, ghcr.io, registry.k8s.io)."""
from __future__ import annotations

import pulumi
import pulumi_gcp as gcp


class GkeCloudNat(pulumi.ComponentResource):
    """NAT for every subnetwork of ``network`` in ``region``. Private nodes have no external IP, so without it
    every image outside Google's registries fails to pull and the GPU runtime never starts."""

    def __init__(self, name: str, network: str, region: str, project: str,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-cluster:gcp:GkeCloudNat", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        router = gcp.compute.Router(f"{name}-router", network=network, region=region, project=project,
                                    description="Cloud NAT for private GKE nodes, managed by gpu-cluster", opts=child)
        self.nat = gcp.compute.RouterNat(
            f"{name}-nat", router=router.name, region=region, project=project,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            log_config={"enable": True, "filter": "ERRORS_ONLY"}, opts=child)
        self.register_outputs({})
