"""Compose the components a StackSpec asks for: the cluster and pools of its cloud, then the layers on top."""
from __future__ import annotations

from catalog import Catalog, Cloud
from compose.built import BuiltCluster
from spec.stack import StackSpec


def build_stack(spec: StackSpec, cat: Catalog, secret_keys: frozenset[str] = frozenset()) -> BuiltCluster:
    """``secret_keys``: settings set with ``pulumi config set --secret`` (validation allows only ``accountId``); each
    reaches its resource as a Pulumi secret."""
    # one cloud's SDK only: pulumi_aws and pulumi_gcp each take about a second to import
    if spec.cloud == Cloud.GCP:
        from compose.gke import build_gke
        return build_gke(spec, cat)
    from compose.eks import build_eks
    return build_eks(spec, cat, account_id_secret="accountId" in secret_keys)
