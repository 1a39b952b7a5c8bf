"""The pack: its name and the ordered list of rules. ``__main__.py`` serves it; tests and the offline preview
build the same pack from here, so there is one list of rules. Assembling loads the catalog once and hands it to the
rules that read it."""
from __future__ import annotations

from typing import Any

from pulumi_policy import EnforcementLevel

from catalog import Catalog, load_catalog

from policies.rule import Rule
from policies.rules import (
    cross_layer_efa_requests, cross_layer_eks_autoscaler, cross_layer_fleet_job_kinds, cross_layer_fleet_kueue_version,
    cross_layer_fleet_queues_mirrored, cross_layer_fleet_quota_placeable, cross_layer_fleet_quota_sum,
    cross_layer_fleet_reachable, cross_layer_fleet_workers, cross_layer_gpu_advertiser, cross_layer_kueue_quota,
    cross_layer_kueue_topology, cross_layer_pool_exists, cross_layer_queued_pool_queue, cross_layer_rxdm_pairing,
    cross_layer_scheduler_tolerations,
    cross_layer_slurm_block_size, cross_layer_slurm_fairshare_accounting, cross_layer_slurm_gres,
    cost_gpu_hour_limit, cost_pinned_capacity, cost_price_age, cost_stack_budget, security_default_credentials,
    security_eks_control_plane_logs, security_eks_imds_hop_limit, security_eks_imdsv2, security_eks_secrets_encryption,
    security_gke_auto_repair, security_gke_auto_upgrade, security_gke_metadata_server,
    security_gke_node_service_account, security_gke_private_nodes, security_gke_secure_boot,
    security_gke_shielded_nodes, security_helm_plaintext_secrets, topology_accelerator_count,
    topology_compact_placement_size, topology_efa_interfaces, topology_fabric_missing, topology_fabric_shape,
    topology_gpu_taint, topology_multi_node_placement,
)

PACK_NAME = "gpu-cluster-guardrails"
DESCRIPTION = ("gpu-cluster guardrails: cost per GPU-hour and stack budget, GPU topology, cross-layer scheduler "
               "consistency and a GKE/EKS security baseline, over concrete resources.")

RULES: list[Rule] = [
    cost_gpu_hour_limit.RULE,
    cost_stack_budget.RULE,
    cost_price_age.RULE,
    cost_pinned_capacity.RULE,
    topology_accelerator_count.RULE,
    topology_multi_node_placement.RULE,
    topology_efa_interfaces.RULE,
    topology_fabric_missing.RULE,
    topology_fabric_shape.RULE,
    topology_gpu_taint.RULE,
    topology_compact_placement_size.RULE,
    cross_layer_gpu_advertiser.RULE,
    cross_layer_pool_exists.RULE,
    cross_layer_kueue_quota.RULE,
    cross_layer_kueue_topology.RULE,
    cross_layer_slurm_gres.RULE,
    cross_layer_slurm_fairshare_accounting.RULE,
    cross_layer_slurm_block_size.RULE,
    cross_layer_scheduler_tolerations.RULE,
    cross_layer_eks_autoscaler.RULE,
    cross_layer_queued_pool_queue.RULE,
    cross_layer_efa_requests.RULE,
    cross_layer_rxdm_pairing.RULE,
    cross_layer_fleet_workers.RULE,
    cross_layer_fleet_queues_mirrored.RULE,
    cross_layer_fleet_job_kinds.RULE,
    cross_layer_fleet_quota_placeable.RULE,
    cross_layer_fleet_quota_sum.RULE,
    cross_layer_fleet_kueue_version.RULE,
    cross_layer_fleet_reachable.RULE,
    security_gke_shielded_nodes.RULE,
    security_gke_secure_boot.RULE,
    security_gke_metadata_server.RULE,
    security_gke_auto_repair.RULE,
    security_gke_auto_upgrade.RULE,
    security_gke_node_service_account.RULE,
    security_gke_private_nodes.RULE,
    security_eks_imdsv2.RULE,
    security_eks_imds_hop_limit.RULE,
    security_eks_control_plane_logs.RULE,
    security_eks_secrets_encryption.RULE,
    security_helm_plaintext_secrets.RULE,
    security_default_credentials.RULE,
]


def pack_arguments(cat: Catalog | None = None) -> dict[str, Any]:
    """Keyword arguments of ``PolicyPack`` (and of the SDK's in-process servicer used by tests); ``cat``: the
    catalog the rules read (default: the project's, loaded here once)."""
    cat = cat if cat is not None else load_catalog()
    return {"name": PACK_NAME, "policies": [rule.policy(cat) for rule in RULES],
            "enforcement_level": EnforcementLevel.ADVISORY, "description": DESCRIPTION,
            "display_name": "gpu-cluster guardrails"}
