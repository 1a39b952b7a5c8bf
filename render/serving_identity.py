"""The cloud identities serving needs, as data: the one each service's pods read their weights with, and the one
KEDA's operator reads vLLM's metrics with (``render/serving_workload.py`` renders the pods;
``components/k8s/serving_identity.py`` creates the cloud side). Pure.

vLLM v0.10.0 (the pinned server) loads ``s3://`` with ``--load-format runai_streamer`` (vLLM docs v0.10.0, "Loading
models with Run:ai Model Streamer"; the ``vllm-openai`` image installs ``runai-model-streamer[s3]`` and boto3) but not
``gs://``: native GCS support arrived in vLLM PR 24909 (2025-09-15) after v0.10.0. So on GKE the bucket is mounted
read-only with the Cloud Storage FUSE CSI driver and vLLM reads files; on EKS vLLM streams from S3 itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import yaml

from catalog import Cloud
from stacks.plan.serving import BucketPath, bucket_path
from stacks.plan.serving_metrics import check_amp_scrape_interval, scrape_interval_s
from stacks.spec.serving import Service

WEIGHTS_MOUNT = "/models"
"""GKE: where the weights bucket is mounted read-only in every vLLM container; vLLM serves this path."""
GCS_FUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
"""Cloud Storage FUSE CSI driver (GKE add-on ``GcsFuseCsiDriver``). vLLM v0.10.0 cannot read ``gs://`` itself: its
``runai_streamer`` loader reads ``s3://`` and files; native GCS came in vLLM PR 24909 (2025-09-15, after v0.10.0)."""
GCS_FUSE_ANNOTATION = "gke-gcsfuse/volumes"
"""Pod annotation that makes GKE inject the Cloud Storage FUSE sidecar (GKE docs, "Mount Cloud Storage buckets as
CSI ephemeral volumes")."""
STREAMER_BOTO3_OFF = ("RUNAI_STREAMER_NO_BOTO3_SESSION", "RUNAI_STREAMER_S3_UNSIGNED")
"""Environment the vLLM container must not carry on EKS. The Run:ai streamer takes S3 credentials through a boto3
session (which reads Pod Identity) unless ``RUNAI_STREAMER_NO_BOTO3_SESSION`` is *present*, whatever its value
(``credentials.py``: ``if "RUNAI_STREAMER_NO_BOTO3_SESSION" in os.environ``, at tag 0.13.3 and after f73a19a, whose
``RUNAI_STREAMER_S3_UNSIGNED=1`` skips credentials altogether): setting it to ``0`` would switch boto3 off, not on."""
GCS_READER_ROLE = "roles/storage.objectViewer"
"""Read objects and list them: no write, no delete, no bucket settings."""


@dataclass(frozen=True)
class WeightsAccess:
    """The identity a service's pods read their weights with, read-only and only for their own bucket (and prefix on
    S3): the Kubernetes ServiceAccount the pods run as, and what the component creates in the cloud for it.

    - GKE: a Google service account with ``roles/storage.objectViewer`` on the bucket, Workload Identity
      (``roles/iam.workloadIdentityUser`` for ``<project>.svc.id.goog[<ns>/<ksa>]``) and the ServiceAccount annotated
      with its email; the Cloud Storage FUSE sidecar and vLLM read the bucket as it.
    - EKS: an IAM role trusting EKS Pod Identity for this cluster, namespace and ServiceAccount only, allowed
      ``s3:GetObject`` under the prefix and ``s3:ListBucket`` of that prefix; vLLM's S3 reads (boto3, the Run:ai
      streamer) take the Pod Identity credentials. The node role is no fallback: IMDSv2's hop limit 1 keeps pods
      from the instance's credentials."""

    service: str
    namespace: str
    service_account: str
    path: BucketPath
    gcp_account_id: str | None = None
    gcp_account_email: str | None = None
    s3_read_policy: dict[str, Any] | None = None


def pod_meta(svc: Service, labels: dict[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": labels}
    where = bucket_path(svc.model_uri)
    if where is not None and where.scheme == "gs":
        meta["annotations"] = {GCS_FUSE_ANNOTATION: "true"}
    return meta


def service_account_name(svc: Service) -> str:
    return f"{svc.name}-vllm"


def gcp_weights_account_id(cluster: str, svc: Service) -> str:
    """6-30 characters, starting with a letter: the service's name and a hash of cluster and service (Google service
    accounts are per project, and two clusters of one project may both serve a ``chat``)."""
    digest = hashlib.sha256(f"{cluster}/{svc.name}".encode()).hexdigest()[:6]
    return f"vllm-{svc.name[:16].rstrip('-')}-{digest}"


def s3_read_policy(path: BucketPath) -> dict[str, Any]:
    """Read-only, this bucket's model prefix only: objects under it, and listing limited to it."""
    bucket = f"arn:aws:s3:::{path.bucket}"
    objects = f"{bucket}/{path.prefix}/*" if path.prefix else f"{bucket}/*"
    listing: dict[str, Any] = {
        "Sid": "ListTheModelPrefixOnly",
        "Effect": "Allow",
        "Action": ["s3:ListBucket"],
        "Resource": bucket,
    }
    if path.prefix:
        listing["Condition"] = {"StringLike": {"s3:prefix": [path.prefix, f"{path.prefix}/*"]}}
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "ReadTheModelObjectsOnly", "Effect": "Allow", "Action": ["s3:GetObject"], "Resource": objects},
            listing,
        ],
    }


def weights_access(svc: Service, ns: str, cloud: Cloud, project: str | None, cluster: str) -> WeightsAccess | None:
    where = bucket_path(svc.model_uri)
    if where is None:
        return None
    if cloud == Cloud.GCP:
        account = gcp_weights_account_id(cluster, svc)
        return WeightsAccess(
            svc.name, ns, service_account_name(svc), where, account, f"{account}@{project}.iam.gserviceaccount.com"
        )
    return WeightsAccess(svc.name, ns, service_account_name(svc), where, s3_read_policy=s3_read_policy(where))


def service_account(svc: Service, ns: str, weights: WeightsAccess | None, labels: dict[str, str]) -> dict[str, Any]:
    meta = {"name": service_account_name(svc), "namespace": ns, "labels": dict(labels)}
    if weights is not None and weights.gcp_account_email:
        meta["annotations"] = {"iam.gke.io/gcp-service-account": weights.gcp_account_email}
    # vLLM never calls the Kubernetes API; Pod Identity and the FUSE driver get their own tokens
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta, "automountServiceAccountToken": False}


KEDA_NAMESPACE = "keda"
KEDA_OPERATOR_SA = "keda-operator"
"""The operator's ServiceAccount in the pinned chart (values ``serviceAccount.operator.name``): it runs the
Prometheus queries of every ScaledObject with ``podIdentity`` authentication."""
GMP_READER_ROLE = "roles/monitoring.viewer"
"""Managed Service for Prometheus' query API needs ``monitoring.timeSeries.list`` (GKE docs, "Query using
Prometheus API"; KEDA's Prometheus scaler with ``podIdentity.provider: gcp``)."""
AMP_QUERY_ACTIONS = ("aps:QueryMetrics", "aps:GetSeries", "aps:GetLabels", "aps:GetMetricMetadata")
"""The PromQL read actions of Amazon Managed Service for Prometheus (AMP User Guide, "IAM permissions"); no write."""


@dataclass(frozen=True)
class MetricsAccess:
    """KEDA's read access to the metric source its triggers query. GKE: a Google service account with Monitoring
    Viewer on the project bound to ``keda/keda-operator`` by Workload Identity (KEDA's chart annotates the
    ServiceAccount). EKS: an IAM role for ``keda/keda-operator`` through EKS Pod Identity allowed only the AMP query
    actions on the one workspace the triggers name."""

    gcp_account_id: str | None = None
    gcp_account_email: str | None = None
    aws_query_policy: dict[str, Any] | None = None
    amp_workspace_arn: str | None = None
    """EKS: the workspace the triggers query, which the AWS managed collector fills (``amp_scrape_config``)."""
    scrape_config: str | None = None

    def keda_values(self) -> dict[str, Any]:
        if self.gcp_account_email:
            return {"podIdentity": {"gcp": {"enabled": True, "gcpIAMServiceAccount": self.gcp_account_email}}}
        return {}


def amp_workspace_arn(url: str, region: str, account: str | None) -> str | None:
    """``https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>`` -> the workspace's ARN; None for any other
    URL (a self-run Prometheus: no AWS grant to make)."""
    head = f"https://aps-workspaces.{region}.amazonaws.com/workspaces/"
    if not url.startswith(head) or not account:
        return None
    return f"arn:aws:aps:{region}:{account}:workspace/{url[len(head) :].split('/')[0]}"


def metrics_access(
    cloud: Cloud, project: str | None, cluster: str, region: str, account: str | None, url: str | None, namespace: str
) -> MetricsAccess:
    if cloud == Cloud.GCP:
        digest = hashlib.sha256(f"{cluster}/keda".encode()).hexdigest()[:6]
        account_id = f"keda-metrics-{digest}"
        return MetricsAccess(account_id, f"{account_id}@{project}.iam.gserviceaccount.com")
    arn = amp_workspace_arn(url or "", region, account)
    if arn is None:
        return MetricsAccess()
    return MetricsAccess(
        aws_query_policy={
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "QueryTheServingWorkspaceOnly",
                    "Effect": "Allow",
                    "Action": list(AMP_QUERY_ACTIONS),
                    "Resource": arn,
                }
            ],
        },
        amp_workspace_arn=arn,
        scrape_config=amp_scrape_config(namespace, cluster=cluster),
    )


AMP_SCRAPER_ACCESS = (
    "The AWS managed collector's own access entry: with the cluster's authenticationMode API (the one "
    "gpu-cluster creates), AMP creates it when the scraper is created through its API, with AMP's "
    "cluster-wide read policy (nodes, nodes/proxy, pods, services, endpoints, configmaps, /metrics); an "
    "IAM principal can be in one access entry only, so gpu-cluster creates none of its own"
)
"""AMP User Guide, AMP-collector-how-to.html (EKS cluster setup: scrapers created through the AMP API or CLI on a
cluster whose authentication mode includes API "will automatically have the correct access entry policy created");
EKS User Guide, creating-access-entries.html ("An IAM principal can't be included in more than one access entry"),
as quoted by the project's serving review."""
VLLM_METRICS_PORT = 8000


def amp_scrape_config(namespace: str, interval_s: int | None = None, cluster: str = "") -> str:
    """Prometheus scrape configuration of the AWS managed collector: vLLM's pods in the serving namespace, port 8000,
    with the ``namespace`` label KEDA's queries match on (vLLM's own metrics carry ``model_name``). ``interval_s``:
    AMP's minimum (30 s) unless longer; a shorter one is refused here, as CreateScraper would refuse it.
    ``cluster``: set as the ``cluster`` label (a workspace may be shared; KEDA's queries match on it, as on GMP)."""
    interval_s = scrape_interval_s(Cloud.AWS) if interval_s is None else interval_s
    check_amp_scrape_interval(interval_s)
    return yaml.safe_dump(
        {
            "global": {"scrape_interval": f"{interval_s}s"},
            "scrape_configs": [
                {
                    "job_name": "vllm",
                    "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [namespace]}}],
                    "relabel_configs": [
                        {
                            "source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name"],
                            "regex": "vllm",
                            "action": "keep",
                        },
                        {
                            "source_labels": ["__meta_kubernetes_pod_container_port_number"],
                            "regex": str(VLLM_METRICS_PORT),
                            "action": "keep",
                        },
                        {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
                        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
                        *([{"target_label": "cluster", "replacement": cluster}] if cluster else []),
                    ],
                }
            ],
        },
        sort_keys=False,
    )
