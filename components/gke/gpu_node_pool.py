"""One GKE GPU node pool: exact accelerators from the catalog, GPU taint, pool label, safe autoscaling. Everything is
resolved in its plan (``stacks/plan/gke_pool.py``); this component wires it to a node service account and the fabric."""

from __future__ import annotations

from typing import Sequence

import pulumi
import pulumi_gcp as gcp

from components.cluster_refs import GkeClusterRef
from components.gke.cluster import shielded_node_config
from components.gke.node_service_account import GkeNodeServiceAccount, service_account_id
from stacks.plan.gke_pool import SERVICE_ACCOUNT
from stacks.plan.facts import PoolFacts
from stacks.plan.stack import PoolPlan


class GkeGpuNodePool(pulumi.ComponentResource):
    """A `gcp.container.NodePool` for one spec pool, with its own node service account.

    The node pool's cloud name is left to Pulumi auto-naming (`<pool>-<7 hex>`), so a change that forces
    replacement creates the new pool before deleting the old one, except for reservation pools, which are deleted
    first (the reservation has no room for a second copy). Counts the autoscaler owns
    (`initialNodeCount`, `nodeCount`) are in `ignore_changes`. ``after``: what the pool waits for (the Container File
    System API when it streams images).
    """

    facts: PoolFacts
    node_pool: gcp.container.NodePool
    """The first rack's node pool (the only one unless the pool spans several racks)."""
    node_pools: list[gcp.container.NodePool]
    node_pool_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        plan: PoolPlan,
        cluster: GkeClusterRef,
        network_config: dict | None = None,
        after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:gcp:GkeGpuNodePool", name, None, opts)
        self.facts = facts = plan.facts
        gke = plan.gke
        assert gke is not None, f"pool {plan.name}: a GKE node pool needs its GKE plan"
        child = pulumi.ResourceOptions(parent=self)
        sa = GkeNodeServiceAccount(
            f"{name}-nodes", service_account_id(cluster.spec_name, plan.name), cluster.project, opts=child
        )
        node_config = {**shielded_node_config(), **gke.node_config}
        node_config[SERVICE_ACCOUNT] = sa.email  # keeps the key's place in the plan's order
        placement = gke.placement_policy
        self.workload_policy: gcp.compute.ResourcePolicy | None = None
        if gke.workload_policy is not None:
            self.workload_policy = gcp.compute.ResourcePolicy(
                f"{name}-workload-policy",
                project=cluster.project,
                region=facts.region,
                description=f"gpu-cluster: {facts.name} in whole {gke.workload_policy['accelerator_topology']} "
                "NVLink domains",
                workload_policy=gke.workload_policy,
                opts=child,
            )
            placement = {"type": "COMPACT", "policy_name": self.workload_policy.name}
        # one GKE node pool per rack under the shared workload policy (Compute Engine places each on its own)
        self.node_pools = [
            gcp.container.NodePool(
                rack,
                cluster=cluster.name,
                location=cluster.location,
                project=cluster.project,
                node_locations=gke.node_locations,
                initial_node_count=gke.initial_node_count,
                autoscaling=gke.autoscaling,
                management=gke.management,
                upgrade_settings=gke.upgrade_settings,
                placement_policy=placement,
                queued_provisioning=gke.queued_provisioning,
                network_config=network_config,  # the fabric's extra NICs (components/gke/fabric.py), else None
                node_config=node_config,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    ignore_changes=["initialNodeCount", "nodeCount"],
                    depends_on=list(after),
                    delete_before_replace=gke.delete_before_replace,
                ),
            )
            for rack in gke.rack_names(name)
        ]
        self.node_pool = self.node_pools[0]
        self.node_pool_name = self.node_pool.name
        self.register_outputs(
            {"nodePoolName": self.node_pool_name, "gpusPerNode": facts.gpus_per_node, "maxGpus": facts.max_gpus}
        )
