"""The Slurm path of ``scheduling`` (``workload: slurm``): Slinky on the cluster, configured from the spec."""
from __future__ import annotations

import pulumi

from render.fabric_claim import claim_templates
from render.slurm_values import SLURM_NAMESPACE
from plan.facts import PoolFacts
from spec.scheduling import Workload
from spec.stack import StackSpec


def build_slurm_path(spec: StackSpec, pools: dict[str, PoolFacts], cluster: pulumi.Resource,
                     k8s_provider) -> dict[str, pulumi.Resource]:
    """SlurmCluster through the cluster's Kubernetes provider, after the cluster and its system pool exist (the
    operator, slurmctld, slurmdbd and MariaDB run on the untainted system pool). Nothing unless ``workload: slurm``.
    Returns the NodeSets' namespace (name -> resource)."""
    if spec.scheduling is None or spec.scheduling.workload != Workload.SLURM:
        return {}
    from components.k8s.fabric_claims import FabricClaims
    from components.slurm.cluster import SlurmCluster

    facts = [pools[p.name] for p in spec.node_pools]
    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    slurm = SlurmCluster("slurm", spec.scheduling, facts, spec.cluster.name, protect=spec.cluster.deletion_protection,
                         after=[cluster], opts=opts)
    # GKE-managed fabric pools: the DRA claim template each NodeSet's pod names, in the NodeSets' namespace
    claims = claim_templates(facts, {n.pool: [SLURM_NAMESPACE] for n in slurm.plan.nodesets})
    if claims:
        FabricClaims("fabric-claims", claims, [slurm.namespace], opts=opts)
    return {SLURM_NAMESPACE: slurm.namespace}
