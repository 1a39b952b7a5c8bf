"""security-gke-private-nodes-ckv-gcp-64: GKE nodes have no public IP addresses (Checkov CKV_GCP_64)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import load_catalog
from policies.findings import Finding
from policies.pools import pool_view
from policies.resources import GKE_CLUSTER, GKE_NODE_POOL, cluster_subject
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN, dig

ID = "security-gke-private-nodes-ckv-gcp-64"


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    if resource.type == GKE_CLUSTER:
        value = dig(resource.props, "privateClusterConfig", "enablePrivateNodes")
        if value is True or value is UNKNOWN:
            return
        subject, keys = cluster_subject(resource)
        yield Finding(subject, f"nodes get public IP addresses (privateClusterConfig.enablePrivateNodes is "
                      f"{'false' if value is False else 'unset'})", "enablePrivateNodes: true",
                      "set privateClusterConfig.enablePrivateNodes: true (gpu-cluster sets it) and reach the "
                      "internet through Cloud NAT", keys)
    elif dig(resource.props, "networkConfig", "enablePrivateNodes") is False:
        view = pool_view(resource, load_catalog())
        assert view is not None  # every GKE node pool has a view
        yield Finding(view.subject, "the pool overrides the cluster and gives its nodes public IP addresses "
                      "(networkConfig.enablePrivateNodes: false)", "unset or true",
                      "remove networkConfig.enablePrivateNodes from the pool", view.keys)


RULE = Rule(
    id=ID, title="GKE private nodes", category=Category.SECURITY, checkov="CKV_GCP_64",
    description="GKE clusters use private nodes, and no node pool turns that off.",
    why=("A node with a public IP is reachable from the internet on every port its firewall allows; GPU nodes "
         "are a favourite cryptomining target. Private nodes reach out through Cloud NAT only."),
    remediation=("1. Set privateClusterConfig.enablePrivateNodes: true on the cluster. 2. Remove "
                 "networkConfig.enablePrivateNodes: false from node pools. 3. Add Cloud NAT for egress."),
    severity=Severity.HIGH, enforcement=EnforcementLevel.MANDATORY, applies_to=(GKE_CLUSTER, GKE_NODE_POOL),
    check=check,
)
