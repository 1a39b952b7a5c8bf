"""The Slurm path of ``scheduling`` (``workload: slurm``): Slinky on the cluster, configured from the Slurm plan."""

from __future__ import annotations

import pulumi

from stacks.plan.stack import StackPlan
from render.fabric_claim import claim_templates
from render.fabric_pod import pod_fabric
from render.slurm_values import SLURM_NAMESPACE


def build_slurm_path(
    plan: StackPlan,
    cluster: pulumi.Resource,
    k8s_provider: pulumi.ProviderResource,
    cloud_provider: pulumi.ProviderResource | None = None,
    cluster_name: pulumi.Input[str] | None = None,
) -> dict[str, pulumi.Resource]:
    """SlurmCluster through the cluster's Kubernetes provider, after the cluster and its system pool exist (the
    operator, slurmctld, slurmdbd and MariaDB run on the untainted system pool). Nothing unless ``workload: slurm``.
    Returns the NodeSets' namespace (name -> resource)."""
    slurm_plan = plan.slurm
    if slurm_plan is None:
        return {}
    from components.k8s.fabric_claims import FabricClaims
    from components.slurm.cluster import SlurmCluster

    facts = list(plan.facts)
    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    slurm = SlurmCluster(
        "slurm",
        slurm_plan,
        {p.name: pod_fabric(p) for p in facts},
        plan.cluster.name,
        protect=plan.cluster.deletion_protection,
        after=[cluster],
        opts=opts,
    )
    if plan.slurm_block_topologies:  # UltraServer groups register tainted until their Slurm block is annotated
        from components.image_digests import resolved
        from components.k8s.custom_resources import custom_resource
        from render.slurm_block_annotator import annotator_objects

        after_ns = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[slurm.namespace])
        for obj in annotator_objects(SLURM_NAMESPACE, plan.slurm_block_topologies):
            if obj["kind"] == "Deployment":  # it may patch nodes: run by the digest the registry returns at deploy
                for c in obj["spec"]["template"]["spec"]["containers"]:
                    c["image"] = resolved(c["image"])
            custom_resource(f"slurm-block-annotator-{obj['kind'].lower()}", obj, after_ns)
    # GKE-managed fabric pools: the DRA claim template each NodeSet's pod names, in the NodeSets' namespace
    claims = claim_templates(facts, {n.pool: [SLURM_NAMESPACE] for n in slurm_plan.nodesets})
    if claims:
        FabricClaims("fabric-claims", claims, [slurm.namespace], opts=opts)
    if slurm_plan.backup_retention_days is not None and cloud_provider is not None:
        from components.slurm.backup import SlurmBackup
        from render.slurm_values import SecretRefs

        # daily dumps of the accounting database to the stack's bucket, through the cloud's workload identity
        SlurmBackup(
            "slurm-backup",
            plan.cloud,
            slurm.namespace.metadata.name,
            plan.cluster.name,
            SecretRefs(),
            slurm_plan.backup_retention_days,
            protect=plan.cluster.deletion_protection,
            project=plan.spec.project,
            region=plan.spec.region,
            eks_cluster=cluster_name,
            opts=pulumi.ResourceOptions(providers=[cloud_provider, k8s_provider], depends_on=[slurm.namespace]),
        )
    return {SLURM_NAMESPACE: slurm.namespace}
