"""Compose the components a StackSpec asks for: the cluster and pools of its cloud, then the layers on top."""
from __future__ import annotations

from catalog import Catalog, Cloud
from compose.built import BuiltCluster
from stacks.spec import StackSpec


def build_stack(spec: StackSpec, cat: Catalog) -> BuiltCluster:
    # one cloud's SDK only: pulumi_aws and pulumi_gcp each take about a second to import
    if spec.cloud == Cloud.GCP:
        from compose.gke import build_gke
        return build_gke(spec, cat)
    from compose.eks import build_eks
    return build_eks(spec, cat)
