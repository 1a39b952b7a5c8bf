"""The cloud side of serving's identities (``render/serving_identity.py`` decides them): per service a read-only
identity for its weights bucket, and KEDA's read access to the metrics. Created before the pods that use them: EKS
injects Pod Identity credentials only into pods created after the association, and a GKE pod whose Google service
account has no binding yet fails its first reads.

- GKE: a Google service account per service with ``roles/storage.objectViewer`` on its bucket only, Workload Identity
  for ``<project>.svc.id.goog[<ns>/<service>-vllm]``; KEDA's Google service account with ``roles/monitoring.viewer``
  on the project, Workload Identity for ``keda/keda-operator``.
- EKS: an IAM role per service trusting EKS Pod Identity for this cluster, namespace and ServiceAccount only, whose
  inline policy reads the model prefix; KEDA's role with the AMP query actions on the one workspace; the Pod
  Identity associations; the AWS managed collector that scrapes vLLM into that workspace (AMP creates its access
  entry).
  Give it the cloud provider and the cluster's Kubernetes provider.
"""

from __future__ import annotations

import json
from typing import Sequence

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

from components.eks.access import pod_identity_trust
from render.serving_identity import (
    GCS_READER_ROLE,
    GMP_READER_ROLE,
    KEDA_NAMESPACE,
    KEDA_OPERATOR_SA,
    MetricsAccess,
    WeightsAccess,
)


class ServingIdentity(pulumi.ComponentResource):
    """``cluster_arn`` and ``cluster_name``: the EKS cluster (trust and associations); ``project``: the GCP project
    (Workload Identity pool ``<project>.svc.id.goog``). The EKS add-on ``eks-pod-identity-agent`` the associations need
    is installed here when ``install_pod_identity_agent`` (a created cluster whose Cluster Autoscaler does not)."""

    created: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        weights: Sequence[WeightsAccess],
        metrics: MetricsAccess,
        gke: bool,
        project: str | None = None,
        cluster_name: pulumi.Input[str] | None = None,
        cluster_arn: pulumi.Input[str] | None = None,
        install_pod_identity_agent: bool = False,
        subnets: Sequence[str] = (),
        security_group: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:serving:ServingIdentity", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.created = []
        pod_identity_agent: list[pulumi.Resource] = []
        if install_pod_identity_agent:  # a created cluster without the Cluster Autoscaler (which installs it)
            pod_identity_agent.append(
                aws.eks.Addon(
                    f"{name}-pod-identity-agent",
                    cluster_name=cluster_name,
                    addon_name="eks-pod-identity-agent",
                    opts=child,
                )
            )
        for w in weights:
            if gke:
                self._gcp_reader(f"{name}-{w.service}", w, project, child)
            elif w.s3_read_policy is not None:
                self._aws_role(
                    f"{name}-{w.service}",
                    w.namespace,
                    w.service_account,
                    w.s3_read_policy,
                    f"reads the {w.service} service's model weights",
                    cluster_name,
                    cluster_arn,
                    pod_identity_agent,
                )
        if gke and metrics.gcp_account_id:
            account = gcp.serviceaccount.Account(
                f"{name}-keda",
                account_id=metrics.gcp_account_id,
                display_name="KEDA reads vLLM metrics (gpu-cluster)",
                opts=child,
            )
            self.created += [
                account,
                gcp.projects.IAMMember(
                    f"{name}-keda-monitoring-viewer",
                    project=project or "",
                    role=GMP_READER_ROLE,
                    member=f"serviceAccount:{metrics.gcp_account_email}",
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[account]),
                ),
                self._workload_identity(f"{name}-keda", account, project, KEDA_NAMESPACE, KEDA_OPERATOR_SA, child),
            ]
        elif metrics.aws_query_policy is not None:
            self._aws_role(
                f"{name}-keda",
                KEDA_NAMESPACE,
                KEDA_OPERATOR_SA,
                metrics.aws_query_policy,
                "KEDA queries the serving metrics workspace",
                cluster_name,
                cluster_arn,
                pod_identity_agent,
            )
        if not gke and metrics.amp_workspace_arn and metrics.scrape_config:
            # the AWS managed collector scrapes vLLM into the workspace KEDA queries (EKS has no metrics pipeline
            # of its own). No access entry here: AMP creates the scraper role's own on an API-mode cluster, and a
            # second entry for the same principal is refused (render/serving_identity.AMP_SCRAPER_ACCESS)
            scraper = aws.amp.Scraper(
                f"{name}-collector",
                alias=f"{name}-vllm",
                scrape_configuration=metrics.scrape_config,
                source={
                    "eks": {
                        "cluster_arn": cluster_arn,
                        "subnet_ids": list(subnets),
                        "security_group_ids": [security_group] if security_group is not None else None,
                    }
                },
                destination={"amp": {"workspace_arn": metrics.amp_workspace_arn}},
                opts=child,
            )
            self.created.append(scraper)
        self.register_outputs({})

    def _gcp_reader(self, name: str, w: WeightsAccess, project: str | None, child: pulumi.ResourceOptions) -> None:
        account = gcp.serviceaccount.Account(
            name,
            account_id=w.gcp_account_id or "",
            display_name=f"vLLM {w.service} reads its weights (gpu-cluster)",
            opts=child,
        )
        # the one bucket, read-only: objectViewer reads and lists objects, nothing else
        # the email is the account's by construction (<id>@<project>.iam.gserviceaccount.com), as the
        # ServiceAccount's annotation says: one string, so the pack can check the three agree
        self.created += [
            account,
            gcp.storage.BucketIAMMember(
                f"{name}-reader",
                bucket=w.path.bucket,
                role=GCS_READER_ROLE,
                member=f"serviceAccount:{w.gcp_account_email}",
                opts=pulumi.ResourceOptions(parent=self, depends_on=[account]),
            ),
            self._workload_identity(name, account, project, w.namespace, w.service_account, child),
        ]

    @staticmethod
    def _workload_identity(
        name: str,
        account: gcp.serviceaccount.Account,
        project: str | None,
        namespace: str,
        ksa: str,
        child: pulumi.ResourceOptions,
    ) -> pulumi.Resource:
        return gcp.serviceaccount.IAMMember(
            f"{name}-workload-identity",
            service_account_id=account.name,
            role="roles/iam.workloadIdentityUser",
            member=f"serviceAccount:{project}.svc.id.goog[{namespace}/{ksa}]",
            opts=child,
        )

    def _aws_role(
        self,
        name: str,
        namespace: str,
        ksa: str,
        policy: dict,
        what: str,
        cluster_name: pulumi.Input[str] | None,
        cluster_arn: pulumi.Input[str] | None,
        agent: Sequence[pulumi.Resource],
    ) -> None:
        child = pulumi.ResourceOptions(parent=self)
        trust = pulumi.Output.from_input(cluster_arn or "").apply(
            lambda arn: json.dumps(pod_identity_trust(str(arn), namespace, ksa))
        )
        role = aws.iam.Role(
            f"{name}-role", assume_role_policy=trust, description=f"{what}, managed by gpu-cluster", opts=child
        )
        inline = aws.iam.RolePolicy(f"{name}-policy", role=role.id, policy=json.dumps(policy), opts=child)
        self.created += [
            role,
            inline,
            aws.eks.PodIdentityAssociation(
                f"{name}-pod-identity",
                cluster_name=cluster_name,
                namespace=namespace,
                service_account=ksa,
                role_arn=role.arn,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*agent, inline]),
            ),
        ]
