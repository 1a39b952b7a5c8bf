"""security-gke-secure-boot-ckv-gcp-68: GKE nodes boot with Secure Boot (Checkov CKV_GCP_68)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.gke import node_configs
from policies.resources import GKE_CLUSTER, GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN, as_list, dig

ID = "security-gke-secure-boot-ckv-gcp-68"
OWN_DRIVER = "INSTALLATION_DISABLED"


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    for nc in node_configs(resource):
        value = dig(nc.config, "shieldedInstanceConfig", "enableSecureBoot")
        if value is True or value is UNKNOWN:
            continue
        own_driver = any(dig(a, "gpuDriverInstallationConfig", "gpuDriverVersion") == OWN_DRIVER
                         for a in as_list(nc.config.get("guestAccelerators")) if isinstance(a, dict))
        fix = "set nodeConfig.shieldedInstanceConfig.enableSecureBoot: true (gpu-cluster sets it)"
        if own_driver:
            fix += (f"; this pool installs its own driver ({OWN_DRIVER}): if the GPU Operator compiles it, Secure "
                    f"Boot rejects the unsigned module, so waive {ID} for this pool with that reason instead")
        yield Finding(nc.subject, f"Secure Boot is {'off' if value is False else 'not set'}",
                      "enableSecureBoot: true (unset means off)", fix, nc.keys)


RULE = Rule(
    id=ID, title="GKE nodes use Secure Boot", category=Category.SECURITY, checkov="CKV_GCP_68",
    description="GKE node pools (and a cluster's default node config) enable Shielded VM Secure Boot.",
    why=("Secure Boot refuses unsigned boot components and kernel modules, so a rootkit cannot persist on a node. "
         "GKE's managed GPU driver is signed and works with it; a driver compiled on the node by the GPU "
         "Operator is not signed and is refused (gpu-operator#1726), which is why this rule is waivable per pool."),
    remediation=("1. Set nodeConfig.shieldedInstanceConfig.enableSecureBoot: true and use GKE's managed driver "
                 "(gpuDriverInstallationConfig DEFAULT or LATEST). 2. If the pool must run an operator-compiled "
                 "driver, add a waiver naming this rule, the pool and that reason."),
    severity=Severity.MEDIUM, enforcement=EnforcementLevel.MANDATORY, applies_to=(GKE_NODE_POOL, GKE_CLUSTER),
    check=check,
)
