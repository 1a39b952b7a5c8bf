"""The Kubernetes Cluster Autoscaler on EKS: scales the stack's managed node groups between minNodes and maxNodes
(from zero too), with an IAM role through EKS Pod Identity that may resize only this cluster's Auto Scaling groups.

GKE scales node pools itself; EKS managed node groups are plain Auto Scaling groups whose desired size nobody changes
unless an autoscaler runs in the cluster. Without one, a pool with ``minNodes: 0`` never gets a node.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping, Sequence, cast

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.charts import CLUSTER_AUTOSCALER, CLUSTER_AUTOSCALER_APP_VERSION, CLUSTER_AUTOSCALER_IMAGE_TAGS
from components.cluster_refs import EksClusterRef
from components.eks.access import pod_identity_trust
from stacks.plan.queued import CA_PROVISIONING_ARGS

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"
RELEASE_NAME = "cluster-autoscaler"
POD_IDENTITY_AGENT = "eks-pod-identity-agent"
EXPANDER = "least-waste"
"""Of the node groups that fit the pending pods, grow the one that leaves the least CPU/memory idle."""

TAG_PREFIX = "k8s.io/cluster-autoscaler/"
ENABLED_TAG = TAG_PREFIX + "enabled"
NODE_TEMPLATE = TAG_PREFIX + "node-template/"

READ_ACTIONS = (
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeLaunchConfigurations",
    "autoscaling:DescribeScalingActivities",
    "autoscaling:DescribeTags",
    "ec2:DescribeImages",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplateVersions",
    "ec2:GetInstanceTypesFromInstanceRequirements",
)
WRITE_ACTIONS = ("autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup")
"""The documented least-privilege policy (cluster-autoscaler AWS README "IAM Policy"; EKS best practices "Cluster
Autoscaler": scope the mutating actions to the cluster's groups with the auto-discovery tag conditions)."""


def discovery_tags(cluster_name: str) -> dict[str, str]:
    """The two ASG tags auto-discovery matches, with the values the IAM policy's conditions require."""
    return {ENABLED_TAG: "true", TAG_PREFIX + cluster_name: "owned"}


def node_template_tags(
    labels: Mapping[str, str], taints: Iterable[tuple[str, str, str]], resources: Mapping[str, int | str]
) -> dict[str, str]:
    """What a node of a group with no node yet will carry, so the autoscaler can scale it up from zero: labels,
    taints as ``value:Effect`` and extended resources (cluster-autoscaler AWS README, "Auto-Discovery Setup").
    ``taints``: (key, value, Kubernetes effect such as ``NoSchedule``)."""
    tags = {f"{NODE_TEMPLATE}label/{key}": value for key, value in labels.items()}
    tags.update({f"{NODE_TEMPLATE}taint/{key}": f"{value}:{effect}" for key, value, effect in taints})
    tags.update({f"{NODE_TEMPLATE}resources/{name}": str(amount) for name, amount in resources.items()})
    return tags


def node_group_asg_name(node_group: aws.eks.NodeGroup) -> pulumi.Output:
    """The name of the Auto Scaling group EKS made for ``node_group`` (known once the group exists)."""
    return node_group.resources.apply(_asg_name)


def _asg_name(resources: Any) -> str | None:
    """``resources[0].autoscaling_groups[0].name`` of an ``aws.eks.NodeGroup`` (known after the group exists)."""
    for resource in resources or []:
        for group in resource.autoscaling_groups or []:
            if group.name:
                return group.name
    return None


def tag_node_group_asg(
    name: str, node_group: aws.eks.NodeGroup, tags: Mapping[str, pulumi.Input[str]], parent: pulumi.Resource
) -> list[aws.autoscaling.Tag]:
    """One ``aws.autoscaling.Tag`` per key on the Auto Scaling group EKS made for ``node_group``. Tags on the
    ``aws.eks.NodeGroup`` itself are not propagated to its Auto Scaling group, so they cannot carry these. Resource
    names follow the tag key (``<name>-asg-tag-node-template/label/<label>``), so adding a label never moves another
    tag to a new resource (a moved tag would be deleted by its old resource after the new one set it)."""
    asg = node_group_asg_name(node_group)
    return [
        aws.autoscaling.Tag(
            f"{name}-asg-tag-{key.removeprefix(TAG_PREFIX)}",
            autoscaling_group_name=asg,
            tag={"key": key, "value": value, "propagate_at_launch": False},
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for key, value in tags.items()
    ]


def image_tag(kubernetes_version: str | None) -> str:
    """The Cluster Autoscaler image built for the cluster's minor version, else the nearest pinned one (the newest
    when the version is not known)."""
    known = sorted(CLUSTER_AUTOSCALER_IMAGE_TAGS, key=lambda v: _minor(v) or (0, 0))
    wanted = _minor(kubernetes_version) if kubernetes_version else None
    if wanted is None:
        return CLUSTER_AUTOSCALER_IMAGE_TAGS[known[-1]]
    nearest = min(reversed(known), key=lambda v: abs((_minor(v) or (0, 0))[1] - wanted[1]))
    return CLUSTER_AUTOSCALER_IMAGE_TAGS[nearest]


def _minor(version: str) -> tuple[int, int] | None:
    """``1.35`` / ``v1.35.2`` / ``1.35.2-eks-3`` -> (1, 35)."""
    try:
        major, minor = str(version).lstrip("v").split(".")[:2]
        return int(major), int(minor.split("-")[0])
    except ValueError:
        return None


def iam_policy(cluster_name: str, region: str) -> dict:
    """Read what it must; resize and terminate only in Auto Scaling groups tagged as this cluster's; describe only
    this cluster's managed node groups (labels and taints of groups at zero nodes)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "ReadScalingState", "Effect": "Allow", "Action": list(READ_ACTIONS), "Resource": "*"},
            {
                "Sid": "ReadThisClustersNodeGroups",
                "Effect": "Allow",
                "Action": ["eks:DescribeNodegroup"],
                "Resource": f"arn:aws:eks:{region}:*:nodegroup/{cluster_name}/*",
            },
            {
                "Sid": "ScaleOnlyThisClustersGroups",
                "Effect": "Allow",
                "Action": list(WRITE_ACTIONS),
                "Resource": "*",
                "Condition": {
                    "StringEquals": {
                        f"aws:ResourceTag/{ENABLED_TAG}": "true",
                        f"aws:ResourceTag/{TAG_PREFIX}{cluster_name}": "owned",
                    }
                },
            },
        ],
    }


def provisioning_request_crd(autoscaler_version: str) -> str:
    """The ProvisioningRequest CRD (autoscaling.x-k8s.io) at the Cluster Autoscaler release the chart ships: the chart
    grants access to ProvisioningRequests but installs no CRD, and EKS has none (GKE ships its own)."""
    return (
        f"https://raw.githubusercontent.com/kubernetes/autoscaler/cluster-autoscaler-{autoscaler_version}/"
        "cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"
    )


def autoscaler_values(
    cluster_name: str,
    region: str,
    tag: pulumi.Input[str],
    node_selector: Mapping[str, str] | None,
    provisioning_requests: bool = False,
) -> dict:
    """Chart values: AWS auto-discovery of this cluster's tagged groups, least-waste expansion, no balancing across
    similar groups (GPU pools differ on purpose: capacity type, reservation, placement), on the system nodes and
    tolerating no taint, so it never lands on (or keeps alive) a GPU node. ``provisioning_requests``: serve Kueue's
    ProvisioningRequests (all-or-nothing scale-ups of queued pools) with the flags the Cluster Autoscaler FAQ names."""
    values: dict[str, Any] = {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster_name, "tags": list(discovery_tags(cluster_name))},
        "fullnameOverride": RELEASE_NAME,
        "image": {"tag": tag},
        "rbac": {"serviceAccount": {"create": True, "name": SERVICE_ACCOUNT}},
        "extraArgs": {
            "expander": EXPANDER,
            "balance-similar-node-groups": False,
            **(CA_PROVISIONING_ARGS if provisioning_requests else {}),
        },
        "priorityClassName": "system-cluster-critical",
        "tolerations": [],
        "resources": {"requests": {"cpu": "100m", "memory": "600Mi"}, "limits": {"memory": "600Mi"}},
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65534,
            "runAsGroup": 65534,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containerSecurityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    if node_selector:
        values["nodeSelector"] = dict(node_selector)
    return values


class ClusterAutoscaler(pulumi.ComponentResource):
    """Cluster Autoscaler (``helm.v3.Release`` of the pinned chart, release ``cluster-autoscaler`` in
    ``kube-system``) for an EKS cluster, with its IAM role bound to the chart's service account through EKS Pod
    Identity. It finds node groups by their Auto Scaling group tags (``k8s.io/cluster-autoscaler/enabled`` and
    ``k8s.io/cluster-autoscaler/<cluster>``, set by the node group components) and respects their min/max sizes.

    ``install_pod_identity_agent``: install the ``eks-pod-identity-agent`` add-on (clusters the stack creates); an
    existing cluster must have it already. ``provisioning_requests``: a pool uses queued provisioning, so the
    autoscaler serves ProvisioningRequests and the stack installs their CRD (``provisioning_request_crd``, before the
    autoscaler and before Kueue, which turns its ProvisioningRequest controller on only when the CRD exists). ``after``: what the release waits for besides its role (the cluster
    component, so its system node group is up before Helm waits for the pod). Give it the AWS provider and the
    cluster's Kubernetes provider.
    """

    role: aws.iam.Role
    release: k8s.helm.v3.Release
    provisioning_request_crd: k8s.yaml.v2.ConfigFile | None

    def __init__(
        self,
        name: str,
        cluster: EksClusterRef,
        install_pod_identity_agent: bool,
        tags: dict[str, str],
        after: Sequence[pulumi.Resource] = (),
        provisioning_requests: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:aws:ClusterAutoscaler", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        # only this cluster's cluster-autoscaler ServiceAccount may assume it (Pod Identity session tags)
        trust = pulumi.Output.from_input(cluster.arn).apply(
            lambda arn: json.dumps(pod_identity_trust(str(arn), NAMESPACE, SERVICE_ACCOUNT))
        )
        self.role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=trust,
            description=f"Cluster Autoscaler of EKS cluster {cluster.spec_name}, managed by gpu-cluster",
            tags=tags or None,
            opts=child,
        )
        policy = aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.id,
            policy=json.dumps(iam_policy(cluster.spec_name, cluster.region)),
            opts=child,
        )
        agent = []
        if install_pod_identity_agent:
            agent = [
                aws.eks.Addon(
                    f"{name}-pod-identity-agent",
                    cluster_name=cluster.name,
                    addon_name=POD_IDENTITY_AGENT,
                    tags=tags or None,
                    opts=child,
                )
            ]
        association = aws.eks.PodIdentityAssociation(
            f"{name}-pod-identity",
            cluster_name=cluster.name,
            namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT,
            role_arn=self.role.arn,
            tags=tags or None,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*agent, policy]),
        )
        version = cluster.kubernetes_version
        # cast: mypy picks no Output.from_input overload for the narrowed Awaitable[str] | Output[str]
        tag = (
            image_tag(version)
            if isinstance(version, str) or version is None
            else pulumi.Output.from_input(cast(pulumi.Input[str], version)).apply(image_tag)
        )
        pin = CLUSTER_AUTOSCALER
        self.provisioning_request_crd = None
        crd: list[pulumi.Resource] = []
        if provisioning_requests:
            self.provisioning_request_crd = k8s.yaml.v2.ConfigFile(
                f"{name}-provisioning-request-crd",
                file=provisioning_request_crd(CLUSTER_AUTOSCALER_APP_VERSION),
                opts=child,
            )
            crd = [self.provisioning_request_crd]
        # the association first: EKS injects Pod Identity credentials only into pods created after it exists
        self.release = k8s.helm.v3.Release(
            name,
            name=RELEASE_NAME,
            chart=pin.chart,
            version=pin.version,
            repository_opts={"repo": pin.repo},
            namespace=NAMESPACE,
            create_namespace=False,
            values=autoscaler_values(
                cluster.spec_name, cluster.region, tag, cluster.system_node_selector, provisioning_requests
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[association, *crd, *after]),
        )
        self.register_outputs(
            {
                "roleArn": self.role.arn,
                "chartVersion": pin.version,
                "imageTag": tag,
                "provisioningRequests": provisioning_requests,
            }
        )
