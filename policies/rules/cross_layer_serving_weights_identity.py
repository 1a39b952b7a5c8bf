"""cross-layer-serving-weights-identity: every vLLM pod that reads its weights from a bucket runs as a Kubernetes
ServiceAccount with a read grant on that bucket (and prefix). Without one the pod cannot load its model: GKE pods get
no Google identity but Workload Identity's, and EKS pods cannot fall back to the node role (IMDSv2's hop limit 1 keeps
them from the instance's credentials), so the server restarts until its startup probe gives up."""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase
from typing import Any, Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.values import as_dict, as_list, dig

ID = "cross-layer-serving-weights-identity"
WORKLOADS = ("kubernetes:apps/v1:Deployment", "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet")
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
KSA_TYPES = (SERVICE_ACCOUNT, "kubernetes:v1:ServiceAccount")
GCS_FUSE = "gcsfuse.csi.storage.gke.io"
GCS_READ_ROLES = (
    "roles/storage.objectViewer",
    "roles/storage.objectUser",
    "roles/storage.objectAdmin",
    "roles/storage.admin",
)
WI_ROLE = "roles/iam.workloadIdentityUser"
S3_URI = re.compile(r"s3://([a-z0-9.-]+)/?([^\s'\"]*)")


def _templates(r: Resource) -> Iterable[dict[str, Any]]:
    spec = as_dict(r.props.get("spec"))
    if r.type.endswith(":Deployment"):
        yield as_dict(spec.get("template"))
    else:
        lws = as_dict(spec.get("leaderWorkerTemplate"))
        for key in ("leaderTemplate", "workerTemplate"):
            if lws.get(key):
                yield as_dict(lws.get(key))


def _buckets(pod: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(scheme, bucket, prefix) the pod reads its weights from: Cloud Storage FUSE volumes and s3:// arguments."""
    out = []
    for v in as_list(pod.get("volumes")):
        csi = as_dict(as_dict(v).get("csi"))
        if csi.get("driver") == GCS_FUSE:
            attrs = as_dict(csi.get("volumeAttributes"))
            only = re.search(r"only-dir=([^,]+)", str(attrs.get("mountOptions", "")))
            out.append(("gs", str(attrs.get("bucketName")), only[1] if only else ""))
    for c in as_list(pod.get("containers")):
        text = " ".join(str(x) for x in [*as_list(as_dict(c).get("command")), *as_list(as_dict(c).get("args"))])
        out += [("s3", m[1], m[2].strip("/")) for m in S3_URI.finditer(text)]
    return out


def _gcs_granted(resources: list[Resource], ns: str, sa: str, bucket: str) -> str | None:
    """None when granted; else what is missing."""
    ksa = next(
        (
            r
            for r in resources
            if r.type in KSA_TYPES
            and dig(r.props, "metadata", "name") == sa
            and dig(r.props, "metadata", "namespace") == ns
        ),
        None,
    )
    email = dig(ksa.props, "metadata", "annotations", "iam.gke.io/gcp-service-account") if ksa else None
    if not email:
        return f"ServiceAccount {ns}/{sa} has no Workload Identity annotation (iam.gke.io/gcp-service-account)"
    if not any(
        r.type == "gcp:serviceaccount/iAMMember:IAMMember"
        and r.props.get("role") == WI_ROLE
        and str(r.props.get("member", "")).endswith(f".svc.id.goog[{ns}/{sa}]")
        for r in resources
    ):
        return f"no roles/iam.workloadIdentityUser binding lets {ns}/{sa} act as {email}"
    if not any(
        r.type == "gcp:storage/bucketIAMMember:BucketIAMMember"
        and r.props.get("bucket") == bucket
        and r.props.get("role") in GCS_READ_ROLES
        and r.props.get("member") == f"serviceAccount:{email}"
        for r in resources
    ):
        return f"{email} has no read role on bucket {bucket}"
    return None


def _allows(policy: Any, action: str, resource: str) -> bool:
    try:
        doc = json.loads(policy) if isinstance(policy, str) else as_dict(policy)
    except ValueError:
        return False
    for st in as_list(doc.get("Statement")):
        st = as_dict(st)
        actions = [str(a) for a in as_list(st.get("Action")) or [st.get("Action")]]
        targets = [str(t) for t in as_list(st.get("Resource")) or [st.get("Resource")]]
        if (
            st.get("Effect") == "Allow"
            and any(fnmatchcase(action, a) for a in actions)
            and any(fnmatchcase(resource, t) for t in targets)
        ):
            return True
    return False


def _s3_granted(resources: list[Resource], ns: str, sa: str, bucket: str, prefix: str) -> str | None:
    assoc = [
        r
        for r in resources
        if r.type == "aws:eks/podIdentityAssociation:PodIdentityAssociation"
        and r.props.get("namespace") == ns
        and r.props.get("serviceAccount") == sa
    ]
    if not assoc:
        return f"no EKS Pod Identity association for {ns}/{sa}"
    probe = f"arn:aws:s3:::{bucket}/{prefix}/config.json" if prefix else f"arn:aws:s3:::{bucket}/config.json"
    roles = {str(a.props.get("roleArn", "")).rsplit("/", 1)[-1] for a in assoc}
    for p in (r for r in resources if r.type == "aws:iam/rolePolicy:RolePolicy"):
        role = str(p.props.get("role", ""))
        # the policy's role is the association's (by name; an unknown value at a real preview cannot be joined)
        if (not role or any(role in (n, f"{n}-id") for n in roles) or not any(roles)) and _allows(
            p.props.get("policy"), "s3:GetObject", probe
        ):
            return None
    return f"the role {ns}/{sa} assumes may not s3:GetObject {probe}"


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    for r in (r for r in resources if r.type in WORKLOADS):
        name = f"{dig(r.props, 'metadata', 'namespace')}/{dig(r.props, 'metadata', 'name')}"
        for pod in _templates(r):
            spec = as_dict(pod.get("spec"))
            ns = str(dig(r.props, "metadata", "namespace") or "default")
            sa = str(spec.get("serviceAccountName") or "default")
            for scheme, bucket, prefix in _buckets(spec):
                missing = (
                    _gcs_granted(resources, ns, sa, bucket)
                    if scheme == "gs"
                    else _s3_granted(resources, ns, sa, bucket, prefix)
                )
                if missing is None:
                    continue
                yield Finding(
                    f"{r.type.rsplit(':', 1)[-1]} '{name}'",
                    "its pods read their weights from a bucket they have no identity for: the model never loads",
                    observed=missing,
                    required=f"read access to {scheme}://{bucket}/{prefix} for ServiceAccount {ns}/{sa}",
                    fix="keep the serving identities gpu-cluster renders (components/k8s/serving_identity.py)",
                    keys=(r.name, scheme, bucket),
                    urn=r.urn,
                )
                break


RULE = register(
    Rule(
        id=ID,
        title="Served models can be read by their pods",
        category=Category.CROSS_LAYER,
        stack=True,
        description="Every vLLM pod reading weights from a bucket runs as a ServiceAccount with read access to it.",
        why=(
            "vLLM loads its weights at start. A pod without a bucket identity gets 403s: GKE pods have no Google "
            "identity but Workload Identity's, and EKS pods cannot reach the node role's credentials (IMDSv2 hop limit "
            "1), so the replica restarts until its startup probe gives up and the service never serves."
        ),
        remediation=(
            "1. GKE: annotate the pods' ServiceAccount with a Google service account (Workload Identity), bind "
            "roles/iam.workloadIdentityUser for <project>.svc.id.goog[<ns>/<sa>] and grant it "
            "roles/storage.objectViewer on the bucket. 2. EKS: create an EKS Pod Identity association for the "
            "ServiceAccount whose role may s3:GetObject under the model prefix."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=WORKLOADS,
        check=check,
    ),
    order=3195,
)
