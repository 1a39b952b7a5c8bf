"""security-gke-secure-boot: GKE nodes boot with Secure Boot (Checkov CKV_GCP_68)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import Equals, FieldCheck, applies_to, field_checks
from policies.resources import GKE_CLUSTER, GKE_NODE_POOL
from policies.rule import Category, Config, Rule
from policies.registry import register
from policies.values import as_list, dig

ID = "security-gke-secure-boot"
OWN_DRIVER = "INSTALLATION_DISABLED"


def fix(node_config: dict, cfg: Config) -> str:
    """The fix, plus the waiver route when the pool installs its own (possibly unsigned) driver."""
    text = "set nodeConfig.shieldedInstanceConfig.enableSecureBoot: true (gpu-cluster sets it)"
    own_driver = any(
        dig(a, "gpuDriverInstallationConfig", "gpuDriverVersion") == OWN_DRIVER
        for a in as_list(node_config.get("guestAccelerators"))
        if isinstance(a, dict)
    )
    if own_driver:
        text += (
            f"; this pool installs its own driver ({OWN_DRIVER}): if the GPU Operator compiles it, Secure "
            f"Boot rejects the unsigned module, so waive {ID} for this pool with that reason instead"
        )
    return text


CHECKS = (
    FieldCheck(
        types=(GKE_NODE_POOL, GKE_CLUSTER),
        path=("shieldedInstanceConfig", "enableSecureBoot"),
        node_config=True,
        required=Equals(True),
        unset_means="off",
        problem="Secure Boot is off, so unsigned boot components and kernel modules load",
        fix=fix,
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="GKE nodes use Secure Boot",
        category=Category.SECURITY,
        checkov="CKV_GCP_68",
        former_ids=("security-gke-secure-boot-ckv-gcp-68",),
        description="GKE node pools (and a cluster's default node config) enable Shielded VM Secure Boot.",
        why=(
            "Secure Boot refuses unsigned boot components and kernel modules, so a rootkit cannot persist on a node. "
            "GKE's managed GPU driver is signed and works with it; a driver compiled on the node by the GPU "
            "Operator is not signed and is refused (gpu-operator#1726), which is why this rule is waivable per pool."
        ),
        remediation=(
            "1. Set nodeConfig.shieldedInstanceConfig.enableSecureBoot: true and use GKE's managed driver "
            "(gpuDriverInstallationConfig DEFAULT or LATEST). 2. If the pool must run an operator-compiled "
            "driver, add a waiver naming this rule, the pool and that reason."
        ),
        severity=Severity.MEDIUM,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
    ),
    order=4020,
)
