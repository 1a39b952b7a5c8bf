"""security-fleet-worker-token: on a fleet worker, the manager's token (``multikueue-sa``) writes only in the
mirrored team namespaces: no ClusterRole bound to it grants a write, and the stack's own admission chain refuses the
token a pod in ``kube-system`` (its CEL evaluated on the request, ``policies/admission_cel.py``)."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.admission_cel import Request, refusals
from policies.findings import Finding
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.tenancy import name_of, of_type
from policies.values import as_dict, as_list, dig

ID = "security-fleet-worker-token"
SERVICE_ACCOUNT = ("kueue-system", "multikueue-sa")
"""Kueue's MultiKueue sample identity, as the worker creates it (``render/fleet_worker.py``)."""
USER = f"system:serviceaccount:{SERVICE_ACCOUNT[0]}:{SERVICE_ACCOUNT[1]}"
SA = "kubernetes:core/v1:ServiceAccount"
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
WRITES = {"create", "update", "patch", "delete", "deletecollection", "*"}
PROBE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "probe"},
    "spec": {"containers": [{"name": "probe", "image": "busybox:1.37"}]},
}


def _token(resources: list[Resource]) -> Resource | None:
    return next(
        (r for r in of_type(resources, SA) if (dig(r.props, "metadata", "namespace"), name_of(r)) == SERVICE_ACCOUNT),
        None,
    )


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    sa = _token(resources)
    if sa is None:
        return
    roles = {name_of(r): r for r in of_type(resources, CLUSTER_ROLE)}
    wide = []
    for b in of_type(resources, CLUSTER_ROLE_BINDING):
        if not any(
            as_dict(s).get("name") == SERVICE_ACCOUNT[1] and as_dict(s).get("namespace") == SERVICE_ACCOUNT[0]
            for s in as_list(b.props.get("subjects"))
        ):
            continue
        role = roles.get(str(dig(b.props, "roleRef", "name")))
        rules = as_list(role.props.get("rules")) if role is not None else []
        verbs = sorted({str(v) for r in rules for v in as_list(as_dict(r).get("verbs"))} & WRITES)
        if verbs:
            wide.append(f"ClusterRole {dig(b.props, 'roleRef', 'name')} grants {', '.join(verbs)} cluster-wide")
    if not refusals(resources, Request(object=PROBE, namespace="kube-system", user=USER), first=True):
        wide.append("a pod created with the token in kube-system is admitted")
    if wide:
        yield Finding(
            f"ServiceAccount '{SERVICE_ACCOUNT[0]}/{SERVICE_ACCOUNT[1]}'",
            "the fleet manager's token may write outside the mirrored team namespaces: whoever holds the "
            "manager's state or its kueue-system Secrets can run pods in kube-system of this worker",
            observed="; ".join(wide),
            required="reads only in the ClusterRole, writes through Roles in the mirrored namespaces, and "
            "a Deny-bound admission policy refusing the token any write elsewhere",
            fix="keep render/fleet_worker.py's read-only ClusterRole, per-namespace Roles and the "
            "gpu-cluster-fleet-token policy and binding",
            keys=(SERVICE_ACCOUNT[1], sa.name, sa.urn),
            urn=sa.urn,
        )


RULE = register(
    Rule(
        id=ID,
        title="The fleet worker token stays in the mirrored namespaces",
        category=Category.SECURITY,
        stack=True,
        description="On a fleet worker, the manager's multikueue-sa token has no cluster-wide write and is refused pods "
        "in kube-system by the stack's admission policy (CEL evaluated).",
        why=(
            "The manager reaches every worker with one static token. MultiKueue's sample role lets it create pods, "
            "Jobs and Workloads in every namespace, kube-system included (no Pod Security label there, no fabric "
            "policy, no Kueue): a leaked manager state or Secret is then cluster-admin in effect on every worker."
        ),
        remediation=(
            "1. Bind a read-only ClusterRole and write through Roles in the mirrored team namespaces. 2. Keep "
            "the gpu-cluster-fleet-token ValidatingAdmissionPolicy bound to every namespace with Deny. 3. Rotate "
            "the token by raising fleet.tokenGeneration (docs/fleet.md)."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(SA,),
        check=check,
    ),
    order=4142,
)
