"""security-gke-metadata-server-ckv-gcp-69: GKE nodes expose the GKE metadata server (Checkov CKV_GCP_69)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.gke import node_configs
from policies.resources import GKE_CLUSTER, GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN, dig

ID = "security-gke-metadata-server-ckv-gcp-69"
MODE = "GKE_METADATA"


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    for nc in node_configs(resource):
        mode = dig(nc.config, "workloadMetadataConfig", "mode")
        if mode == MODE or mode is UNKNOWN:
            continue
        yield Finding(nc.subject, f"pods can read the node's metadata and credentials (workloadMetadataConfig.mode "
                      f"is {mode or 'unset'})", f"mode {MODE}",
                      f"set nodeConfig.workloadMetadataConfig.mode: {MODE} (gpu-cluster sets it) and give pods "
                      "Workload Identity", nc.keys)


RULE = Rule(
    id=ID, title="GKE metadata server on nodes", category=Category.SECURITY, checkov="CKV_GCP_69",
    description="GKE node pools (and a cluster's default node config) run the GKE metadata server "
                "(workloadMetadataConfig.mode GKE_METADATA).",
    why=("Without the GKE metadata server, every pod on a node can fetch the node service account's token and "
         "the instance metadata (kube-env bootstrap credentials). Workload Identity needs it too."),
    remediation=("1. Set nodeConfig.workloadMetadataConfig.mode: GKE_METADATA on every pool. 2. Enable Workload "
                 "Identity on the cluster and bind pods to their own service accounts."),
    severity=Severity.HIGH, enforcement=EnforcementLevel.MANDATORY, applies_to=(GKE_NODE_POOL, GKE_CLUSTER),
    check=check,
)
