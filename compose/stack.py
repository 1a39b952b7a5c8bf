"""Compose the components a StackPlan asks for: the cluster and pools of its cloud, then the layers on top."""

from __future__ import annotations

from catalog import Cloud
from compose.built import BuiltCluster
from stacks.plan.stack import StackPlan


def build_stack(plan: StackPlan, secret_keys: frozenset[str] = frozenset()) -> BuiltCluster:
    """``secret_keys``: settings set with ``pulumi config set --secret`` (validation allows only ``accountId``); each
    reaches its resource as a Pulumi secret."""
    # one cloud's SDK only: pulumi_aws and pulumi_gcp each take about a second to import
    if plan.cloud == Cloud.GCP:
        from compose.gke import build_gke

        return build_gke(plan)
    from compose.eks import build_eks

    return build_eks(plan, account_id_secret="accountId" in secret_keys)
