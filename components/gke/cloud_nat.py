"""Cloud Router + Cloud NAT: outbound internet for private GKE nodes (images from nvcr.io, ghcr.io, registry.k8s.io)."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp


class GkeCloudNat(pulumi.ComponentResource):
    """NAT for every subnetwork of ``network`` in ``region``. Private nodes have no external IP, so without it
    every image outside Google's registries fails to pull and the GPU runtime never starts.

    ``static_addresses`` > 0 (a fleet manager, ``stacks/plan/fleet_egress.py``): that many reserved static external
    addresses (``<name>-ip-<i>``), and the NAT uses only them (``MANUAL_ONLY``), so the workers' API servers can
    admit the manager's traffic by address. ``addresses``: those addresses as /32 CIDRs (known once created)."""

    addresses: pulumi.Output[list[str]]

    def __init__(
        self,
        name: str,
        network: str,
        region: str,
        project: str,
        static_addresses: int = 0,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:gcp:GkeCloudNat", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        router = gcp.compute.Router(
            f"{name}-router",
            network=network,
            region=region,
            project=project,
            description="Cloud NAT for private GKE nodes, managed by gpu-cluster",
            opts=child,
        )
        reserved = [
            gcp.compute.Address(
                f"{name}-ip-{i}",
                region=region,
                project=project,
                address_type="EXTERNAL",
                network_tier="PREMIUM",
                description="Static Cloud NAT address (fleet manager egress), gpu-cluster",
                opts=child,
            )
            for i in range(static_addresses)
        ]
        self.nat = gcp.compute.RouterNat(
            f"{name}-nat",
            router=router.name,
            region=region,
            project=project,
            nat_ip_allocate_option="MANUAL_ONLY" if reserved else "AUTO_ONLY",
            nat_ips=[a.self_link for a in reserved] if reserved else None,
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            log_config={"enable": True, "filter": "ERRORS_ONLY"},
            opts=child,
        )
        self.addresses = pulumi.Output.all(*[a.address for a in reserved]).apply(
            lambda ips: [f"{ip}/32" for ip in ips if ip]
        )  # offline (mocks) the addresses have no value: []
        self.register_outputs({"addresses": self.addresses})
