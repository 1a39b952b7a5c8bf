"""security-gke-node-service-account: GKE nodes do not run as the Compute Engine default service
account (Checkov CKV2_GCP_1)."""

from __future__ import annotations

import re
from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.gke import node_configs
from policies.resources import GKE_CLUSTER, GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import UNKNOWN

ID = "security-gke-node-service-account"
DEFAULT_SA = re.compile(r"^[0-9]+-compute@developer\.gserviceaccount\.com$")


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    for nc in node_configs(resource):
        sa = nc.config.get("serviceAccount")
        if sa is UNKNOWN:
            continue  # computed at deploy: an account created in this stack, never the project default
        if isinstance(sa, str) and sa and sa != "default" and not DEFAULT_SA.match(sa):
            continue
        yield Finding(
            nc.subject,
            "nodes run as the Compute Engine default service account, which has Editor on the project",
            observed=f"nodeConfig.serviceAccount {sa or 'unset (the default account)'}",
            required="a dedicated service account with only roles/container.defaultNodeServiceAccount (plus "
            "registry read)",
            fix="set nodeConfig.serviceAccount to a dedicated account (gpu-cluster creates one per pool)",
            keys=nc.keys,
        )


RULE = register(
    Rule(
        id=ID,
        title="GKE nodes use a dedicated service account",
        category=Category.SECURITY,
        checkov="CKV2_GCP_1",
        former_ids=("security-gke-node-service-account-ckv2-gcp-1",),
        description="GKE node pools (and a cluster's default node config) run as a dedicated service account, not "
        "the Compute Engine default one.",
        why=(
            "The default compute service account has the Editor role on the project by default, so any pod that "
            "reaches node credentials can change the project. A node only needs "
            "roles/container.defaultNodeServiceAccount and registry read."
        ),
        remediation=(
            "1. Create a service account per pool (or per cluster) with "
            "roles/container.defaultNodeServiceAccount and roles/artifactregistry.reader. 2. Set it as "
            "nodeConfig.serviceAccount."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL, GKE_CLUSTER),
        check=check,
    ),
    order=4060,
)
