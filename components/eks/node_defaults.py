"""Launch-template settings every EKS node shares: IMDSv2 only, encrypted gp3 root volume (GPU nodes add throughput
and IOPS for multi-GB images: ``stacks.spec.eks_node.root_volume_performance``)."""

from __future__ import annotations

IMDS_HOP_LIMIT = 1
"""Hop limit 1 keeps pods (one hop away) off the node's instance credentials: use EKS Pod Identity / IRSA."""
ROOT_DEVICE = "/dev/xvda"  # AL2023 and Bottlerocket EKS AMIs boot from xvda


def metadata_options() -> dict:
    return {
        "http_endpoint": "enabled",
        "http_tokens": "required",
        "http_put_response_hop_limit": IMDS_HOP_LIMIT,
        "instance_metadata_tags": "disabled",
    }


def root_volume(size_gib: int, throughput_mibps: int | None = None, iops: int | None = None) -> list[dict]:
    """Encrypted gp3 root volume; without throughput/IOPS gp3's baseline (125 MiB/s, 3000 IOPS) applies."""
    ebs: dict = {"volume_size": size_gib, "volume_type": "gp3", "encrypted": "true", "delete_on_termination": "true"}
    if throughput_mibps is not None:
        ebs["throughput"] = throughput_mibps
    if iops is not None:
        ebs["iops"] = iops
    return [{"device_name": ROOT_DEVICE, "ebs": ebs}]
