"""The worker side of a fleet: the identity the manager's MultiKueue uses on this cluster, and the kubeconfig it
reads. Pure.

Following Kueue's ``create-multikueue-kubeconfig.sh`` (v0.19.2): a ServiceAccount ``multikueue-sa`` in
``kueue-system``, a ClusterRole for the job kinds the fleet dispatches, its binding, and a
``kubernetes.io/service-account-token`` Secret whose static token goes into the kubeconfig. Kueue (0.13.8/0.14.3/0.15+)
refuses MultiKueue kubeconfigs with exec plugins, auth providers, token or CA files, basic auth or insecure TLS, so a
static token with inline CA data is the one form that works for GKE and EKS workers alike (``check_kubeconfig``
states those rules; a test parses the result with the Kubernetes Python client).

The sample role has no rule for Kubeflow Trainer's TrainJob, which the fleet dispatches: MultiKueue's TrainJob adapter
creates, reads, watches and deletes the copy on the worker with this identity, so the rule is added here. The role
covers every kind the manager's Kueue manages (``KIND_OF_INTEGRATION``), plain pods included: the manager enables the
``pod`` integration, so the token may create and delete pods in the mirrored team namespaces, where the namespace's
own admission (Pod Security baseline, ``gpu-cluster-fabric-pods``) applies to them as to a tenant's. Its pods run under
the namespace's ``default`` service account only (``TOKEN_SERVICE_ACCOUNTS``). The sample's
kinds the fleet does not dispatch (Ray, AppWrapper, Kubeflow v1 jobs) are left out.

Least privilege (the sample grants everything cluster-wide, ``kube-system`` included): the ClusterRole only reads
(MultiKueue watches the worker's Workloads across namespaces), and the writes (create, delete; update and patch of
Workloads) come from a Role in each mirrored team namespace. A worker-side admission policy, bound to every namespace,
refuses the token any write outside them (:func:`token_admission_objects`), should RBAC ever grow.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Sequence

import yaml

from render.admission import API_VERSION, LABELS, validating_policy
from render.fleet import FLEET_PART_OF
from render.kueue_config import INTEGRATIONS
from render.pod_security_cel import cel_list

NAMESPACE = "kueue-system"
SERVICE_ACCOUNT = "multikueue-sa"
JOB_VERBS = ["create", "delete", "get", "list", "watch"]
READ_VERBS = ["get", "list", "watch"]
TOKEN_POLICY = "gpu-cluster-fleet-token"
KIND_OF_INTEGRATION = {
    "batch/job": ("batch", "jobs"),
    "jobset.x-k8s.io/jobset": ("jobset.x-k8s.io", "jobsets"),
    "trainer.kubeflow.org/trainjob": ("trainer.kubeflow.org", "trainjobs"),
    "pod": ("", "pods"),
}
"""API group and resource of each Kueue integration gpu-cluster enables (``render/kueue_config.INTEGRATIONS``): the
manager dispatches every kind its Kueue manages, so the worker role covers each (a test holds the two in step)."""
DISPATCHED_KINDS = tuple(KIND_OF_INTEGRATION[i] for i in INTEGRATIONS)


def token_secret_name(generation: int) -> str:
    """A new generation is a new Secret (a new token); the old one is deleted, which revokes its token."""
    return f"{SERVICE_ACCOUNT}-token-{generation}"


def username() -> str:
    return f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"


def cluster_role_rules() -> list[dict[str, Any]]:
    """Cluster-wide, read only."""
    rules: list[dict[str, Any]] = []
    for group, resource in DISPATCHED_KINDS:
        rules.append({"apiGroups": [group], "resources": [resource], "verbs": list(READ_VERBS)})
        rules.append({"apiGroups": [group], "resources": [f"{resource}/status"], "verbs": ["get"]})
    rules += [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": list(READ_VERBS)},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "localqueues"], "verbs": list(READ_VERBS)},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["get"]},
    ]
    return rules


def namespace_role_rules() -> list[dict[str, Any]]:
    """In each mirrored namespace: the writes MultiKueue makes there."""
    rules: list[dict[str, Any]] = [
        {"apiGroups": [group], "resources": [resource], "verbs": ["create", "delete"]}
        for group, resource in DISPATCHED_KINDS
    ]
    rules += [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["create", "delete", "update", "patch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["patch", "update"]},
    ]
    return rules


def worker_access_objects(generation: int, namespaces: Sequence[str] = ()) -> list[dict[str, Any]]:
    """ServiceAccount, ClusterRole (read), its binding, a Role and RoleBinding per mirrored namespace (write), and the
    token Secret, in creation order."""
    meta = {"labels": dict(FLEET_PART_OF)}
    subject = {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}
    out: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE, **meta},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": f"{SERVICE_ACCOUNT}-role", **meta},
            "rules": cluster_role_rules(),
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"{SERVICE_ACCOUNT}-crb", **meta},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": f"{SERVICE_ACCOUNT}-role",
            },
            "subjects": [subject],
        },
    ]
    for ns in dict.fromkeys(namespaces):
        out += [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": f"{SERVICE_ACCOUNT}-writer", "namespace": ns, **meta},
                "rules": namespace_role_rules(),
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": f"{SERVICE_ACCOUNT}-writer", "namespace": ns, **meta},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": f"{SERVICE_ACCOUNT}-writer",
                },
                "subjects": [subject],
            },
        ]
    out.append(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/service-account-token",
            "metadata": {
                "name": token_secret_name(generation),
                "namespace": NAMESPACE,
                "annotations": {"kubernetes.io/service-account.name": SERVICE_ACCOUNT},
                **meta,
            },
        }
    )
    return out


ADMITTED_CONDITIONS = ("QuotaReserved", "Admitted")
ADMITS_NOTHING = (
    "request.resource.resource != 'workloads' || request.operation == 'DELETE' || !has(object.status) || ("
    "(!has(object.status.admission) || (request.operation == 'UPDATE' && has(oldObject.status) "
    "&& has(oldObject.status.admission) && object.status.admission == oldObject.status.admission)) && "
    "(!has(object.status.conditions) || object.status.conditions.all(c, !(c.type in "
    + cel_list(list(ADMITTED_CONDITIONS))
    + ") || c.status != 'True' || (request.operation == 'UPDATE' && has(oldObject.status) "
    "&& has(oldObject.status.conditions) && oldObject.status.conditions.exists(o, o.type == c.type "
    "&& o.status == 'True')))))"
)
"""The token keeps ``workloads/status`` patch/update in the mirrored namespaces: MultiKueue patches the worker's copy
when the manager evicts its Workload (``PatchAdmissionStatus`` with ``SetDeactivationTarget``, reason
``EvictedOnManagerCluster``: Kueue v0.19.2 ``pkg/controller/admissionchecks/multikueue/workload.go`` lines 590-597, not
behind a feature gate; only opening a preemption gate, lines 639-647, is behind ``MultiKueueOrchestratedPreemption``),
and upstream's ``create-multikueue-kubeconfig.sh`` (v0.19.2) grants it. Such a patch re-applies the copy's admission
as it is, which the check below lets through (it compares with ``oldObject``). What it never writes is an admission:
this CEL refuses a Workload write by the token that sets ``status.admission``, changes an existing one (another
ClusterQueue or flavors: the copy would run on quota it was never given), or turns ``QuotaReserved`` / ``Admitted``
true where they were not."""


TOKEN_SERVICE_ACCOUNTS = ("", "default")
"""The service accounts the token's pods may run as: the namespace's ``default`` (unset means it). The token writes
pods and pod templates in team namespaces; a team namespace may hold service accounts bound to a cloud identity (GKE
Workload Identity, EKS Pod Identity), and a leaked token naming one would act as that team in its cloud. So a fleet
job runs under ``default`` on the worker; a job that needs another identity is submitted to that worker directly."""


def _sa_pinned(spec: str) -> str:
    allowed = cel_list(list(TOKEN_SERVICE_ACCOUNTS))
    return (
        f"((!has({spec}.serviceAccountName) || {spec}.serviceAccountName in {allowed}) && "
        f"(!has({spec}.serviceAccount) || {spec}.serviceAccount in {allowed}))"
    )


def _replicated(jobs: str) -> str:
    """Every pod spec of a JobSet's ``replicatedJobs`` list (as in a JobSet, or a TrainJob's runtime patch)."""
    return (
        f"{jobs}.all(r, !has(r.template) || !has(r.template.spec) || !has(r.template.spec.template) || "
        f"!has(r.template.spec.template.spec) || {_sa_pinned('r.template.spec.template.spec')})"
    )


PINS_SERVICE_ACCOUNT = (
    "request.operation == 'DELETE' || request.operation == 'CONNECT' || "
    f"(request.resource.resource != 'pods' || !has(object.spec) || {_sa_pinned('object.spec')}) && "
    "(request.resource.resource != 'jobs' || !has(object.spec) || !has(object.spec.template) || "
    f"!has(object.spec.template.spec) || {_sa_pinned('object.spec.template.spec')}) && "
    "(request.resource.resource != 'jobsets' || !has(object.spec) || !has(object.spec.replicatedJobs) || "
    f"{_replicated('object.spec.replicatedJobs')}) && "
    "(request.resource.resource != 'trainjobs' || !has(object.spec) || !has(object.spec.runtimePatches) || "
    "object.spec.runtimePatches.all(p, !has(p.trainingRuntimeSpec) || !has(p.trainingRuntimeSpec.template) || "
    "!has(p.trainingRuntimeSpec.template.spec) || !has(p.trainingRuntimeSpec.template.spec.replicatedJobs) || "
    f"{_replicated('p.trainingRuntimeSpec.template.spec.replicatedJobs')}))"
)
"""Pods, Jobs, JobSets and TrainJobs (its ``runtimePatches``, Trainer v2.3.0) written by the token name no service
account but ``default``."""


def token_admission_objects(namespaces: Sequence[str]) -> list[dict[str, Any]]:
    """The policy refusing the manager's token any write outside the mirrored namespaces, and its binding to every
    namespace (``kube-system`` included: no namespaceSelector)."""
    policy = validating_policy(
        TOKEN_POLICY,
        [],
        [
            {
                "expression": f"request.userInfo.username != '{username()}' || "
                f"request.namespace in {cel_list(list(dict.fromkeys(namespaces)))}",
                "message": "the fleet manager's token may only write in the mirrored namespaces: "
                + (", ".join(dict.fromkeys(namespaces)) or "none"),
            },
            {
                "expression": f"request.userInfo.username != '{username()}' || {ADMITS_NOTHING}",
                "message": "the fleet manager's token may not mark a Workload as holding quota or admitted (only the "
                "worker's own Kueue sets QuotaReserved, Admitted and status.admission)",
            },
            {
                "expression": f"request.userInfo.username != '{username()}' || {PINS_SERVICE_ACCOUNT}",
                "message": "the fleet manager's token may not run pods under a service account other than the "
                "namespace's default (a fleet job that needs another identity goes to the worker directly)",
            },
        ],
        rule={
            "apiGroups": ["*"],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE", "DELETE", "CONNECT"],
            "resources": ["*", "*/*"],
        },
    )
    del policy["spec"]["variables"]
    binding = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": TOKEN_POLICY, "labels": dict(LABELS)},
        "spec": {"policyName": TOKEN_POLICY, "validationActions": ["Deny"]},
    }
    return [policy, binding]


def server_url(endpoint: str) -> str:
    """GKE exports an IP, EKS an https URL."""
    return endpoint if endpoint.startswith("https://") else f"https://{endpoint}"


def worker_kubeconfig(cluster: str, endpoint: str, ca_data: str, token: str) -> str:
    """The kubeconfig MultiKueue reads from the manager's Secret: inline CA data and the static token, nothing else."""
    user = f"{cluster}-{SERVICE_ACCOUNT}"
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "current-context": cluster,
        "clusters": [
            {"name": cluster, "cluster": {"server": server_url(endpoint), "certificate-authority-data": ca_data}}
        ],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
        "users": [{"name": user, "user": {"token": token}}],
    }
    return yaml.safe_dump(doc, sort_keys=False)


_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
FORBIDDEN_USER_FIELDS = {
    "exec": "exec plugins are not allowed",
    "auth-provider": "auth providers are not allowed",
    "tokenFile": "token files are not allowed",
    "username": "basic auth is not allowed",
    "password": "basic auth is not allowed",
}
FORBIDDEN_CLUSTER_FIELDS = {
    "insecure-skip-tls-verify": "insecure TLS is not allowed",
    "certificate-authority": "CA file paths are not allowed",
}


def check_kubeconfig(text: str) -> list[str]:
    """The rules Kueue 0.19's MultiKueue applies to a kubeconfig Secret (``validateKubeconfig``/``validateRestConfig``
    in ``pkg/controller/admissionchecks/multikueue/multikueuecluster.go``), as a list of problems (empty: accepted).
    Static ``token`` is allowed; the server host must be an IP address or a DNS-1123 subdomain."""
    problems: list[str] = []
    doc = yaml.safe_load(text)
    for entry in doc.get("users") or []:
        user = entry.get("user") or {}
        problems += list(
            dict.fromkeys(
                f"user {entry.get('name')}: {why}" for key, why in FORBIDDEN_USER_FIELDS.items() if user.get(key)
            )
        )
    for entry in doc.get("clusters") or []:
        cluster = entry.get("cluster") or {}
        problems += [
            f"cluster {entry.get('name')}: {why}" for key, why in FORBIDDEN_CLUSTER_FIELDS.items() if cluster.get(key)
        ]
        if not cluster.get("server"):
            problems.append(f"cluster {entry.get('name')}: server URL is required")
            continue
        host = re.sub(r"^https?://", "", str(cluster["server"]).lower()).split("/")[0]
        host = host if host.startswith("[") else host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        if not _valid_host(host):
            problems.append(f"cluster {entry.get('name')}: server host {host!r} is neither an IP nor a DNS-1123 name")
    return problems


def _valid_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("]")[0].strip("["))
        return True
    except ValueError:
        return len(host) <= 253 and bool(_DNS1123_SUBDOMAIN.fullmatch(host))
