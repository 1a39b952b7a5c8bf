"""Cluster Autoscaler on EKS: the Helm release, its Pod Identity role and the Auto Scaling group tags that let it find
node groups and scale them up from zero (recorded under mocks)."""

from __future__ import annotations

import json

import pytest

from components.charts import CLUSTER_AUTOSCALER, CLUSTER_AUTOSCALER_IMAGE_TAGS
from components.eks.cluster_autoscaler import image_tag
from preview.engine import run_program
from stacks.validate.cluster import EKS_VERSIONS
from tests.support.spec.edit import edit, edits
from tests.support.helm.values import unknown_keys
from tests.support.preview.recorded import of_type, one, parent_of
from tests.support.spec.stack_configs import EKS, GKE

RELEASE = "kubernetes:helm.sh/v3:Release"
ASG_TAG = "aws:autoscaling/tag:Tag"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "k8s.io/cluster-autoscaler/node-template/"

CHART_VALUES = {
    # The keys and shapes our values use, as in the chart's values.yaml (kubernetes/autoscaler
    # cluster-autoscaler/charts/cluster-autoscaler/values.yaml, 9.5x line; ../shared/schemas has no copy).
    # extraArgs is free-form here: the chart turns every key into a --flag.
    "affinity": {},
    "autoDiscovery": {"clusterName": None, "namespace": None, "tags": [], "roles": [], "labels": []},
    "awsRegion": "",
    "cloudProvider": "aws",
    "containerSecurityContext": {},
    "expanderPriorities": {},
    "extraArgs": {},
    "fullnameOverride": "",
    "nodeSelector": {},
    "priorityClassName": "system-cluster-critical",
    "image": {
        "repository": "registry.k8s.io/autoscaling/cluster-autoscaler",
        "tag": "",
        "pullPolicy": "",
        "pullSecrets": [],
    },
    "rbac": {
        "create": True,
        "pspEnabled": False,
        "clusterScoped": True,
        "annotations": {},
        "additionalRules": [],
        "serviceAccount": {"annotations": {}, "create": True, "name": "", "automountServiceAccountToken": True},
    },
    "replicaCount": 1,
    "resources": {},
    "securityContext": {},
    "tolerations": [],
    "topologySpreadConstraints": [],
}


@pytest.fixture(scope="module")
def rec():
    return run_program(EKS)


def asg_tags(rec, group: str) -> dict[str, str]:
    """Tag key -> value on the Auto Scaling group of node group ``group`` (as the mock names it)."""
    tags = [r.inputs for r in of_type(rec, ASG_TAG) if r.inputs["autoscalingGroupName"] == f"eks-{group}-offline"]
    assert all(t["tag"]["propagateAtLaunch"] is False for t in tags)
    return {t["tag"]["key"]: t["tag"]["value"] for t in tags}


def test_release_is_the_pinned_chart_in_kube_system_on_the_system_nodes(rec):
    rel = one(rec, RELEASE, "cluster-autoscaler")
    i = rel.inputs
    assert (i["chart"], i["version"], i["repositoryOpts"]) == (
        "cluster-autoscaler",
        "9.59.0",
        {"repo": "https://kubernetes.github.io/autoscaler"},
    )
    assert (i["chart"], i["version"]) == (CLUSTER_AUTOSCALER.chart, CLUSTER_AUTOSCALER.version)
    assert i["namespace"] == "kube-system" and i["name"] == "cluster-autoscaler"
    v = i["values"]
    assert v["cloudProvider"] == "aws" and v["awsRegion"] == "us-east-1"
    assert v["autoDiscovery"] == {
        "clusterName": "ml",
        "tags": ["k8s.io/cluster-autoscaler/enabled", "k8s.io/cluster-autoscaler/ml"],
    }
    assert v["nodeSelector"] == {"gpu-cluster/node-role": "system"}
    assert v["tolerations"] == [], "tolerates no taint: never on a GPU node"
    assert v["extraArgs"] == {"expander": "least-waste", "balance-similar-node-groups": False}
    assert v["image"] == {"tag": "v1.35.1"}, "the image built for the cluster's Kubernetes 1.35"
    assert parent_of(rec, rel).type == "gpu-cluster:aws:ClusterAutoscaler"
    system = one(rec, NODE_GROUP, "ml-system").inputs
    assert system["labels"] == v["nodeSelector"]


def test_values_exist_in_the_chart():
    values = one(run_program(EKS), RELEASE, "cluster-autoscaler").inputs["values"]
    assert unknown_keys(values, CHART_VALUES) == []


def test_pod_identity_binds_the_role_to_the_charts_service_account_before_the_pods_start(rec):
    rel = one(rec, RELEASE, "cluster-autoscaler")
    assoc = one(rec, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert assoc.inputs["namespace"] == rel.inputs["namespace"]
    assert assoc.inputs["serviceAccount"] == rel.inputs["values"]["rbac"]["serviceAccount"]["name"]
    assert assoc.inputs["clusterName"] == "ml"
    assert assoc.urn in rel.dependencies, "Pod Identity credentials reach only pods created after the association"
    system = one(rec, NODE_GROUP, "ml-system")
    assert system.urn in rel.dependencies, "after the system node group it runs on (Helm waits for the pod)"
    agent = one(rec, "aws:eks/addon:Addon", "cluster-autoscaler-pod-identity-agent")
    assert agent.inputs["addonName"] == "eks-pod-identity-agent" and agent.urn in assoc.dependencies
    role = one(rec, "aws:iam/role:Role", "cluster-autoscaler-role")
    (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert trust["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    assert (
        trust["Condition"]["StringEquals"]["aws:RequestTag/kubernetes-service-account"]
        == rel.inputs["values"]["rbac"]["serviceAccount"]["name"]
    )  # the whole condition: test_cluster_access.py


def test_iam_policy_is_least_privilege(rec):
    doc = json.loads(one(rec, "aws:iam/rolePolicy:RolePolicy", "cluster-autoscaler-policy").inputs["policy"])
    by_sid = {s["Sid"]: s for s in doc["Statement"]}
    write = by_sid["ScaleOnlyThisClustersGroups"]
    assert write["Action"] == ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"]
    assert write["Condition"] == {
        "StringEquals": {
            "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
            "aws:ResourceTag/k8s.io/cluster-autoscaler/ml": "owned",
        }
    }
    assert by_sid["ReadThisClustersNodeGroups"] == {
        "Sid": "ReadThisClustersNodeGroups",
        "Effect": "Allow",
        "Action": ["eks:DescribeNodegroup"],
        "Resource": "arn:aws:eks:us-east-1:*:nodegroup/ml/*",
    }
    actions = [a for s in doc["Statement"] for a in s["Action"]]
    assert all("*" not in a for a in actions)
    assert all(a.split(":")[1].startswith(("Describe", "Get")) for a in by_sid["ReadScalingState"]["Action"])


def test_gpu_node_group_asg_is_tagged_for_discovery_and_scale_from_zero(rec):
    assert asg_tags(rec, "p5") == {
        "k8s.io/cluster-autoscaler/enabled": "true",
        "k8s.io/cluster-autoscaler/ml": "owned",
        TEMPLATE + "label/gpu-cluster/pool": "p5",
        TEMPLATE + "label/k8s.amazonaws.com/accelerator": "nvidia-h100",
        TEMPLATE + "taint/nvidia.com/gpu": "present:NoSchedule",
        TEMPLATE + "resources/nvidia.com/gpu": "8",
        TEMPLATE + "resources/vpc.amazonaws.com/efa": "32",
        TEMPLATE + "resources/hugepages-2Mi": "10256Mi",
    }
    tag = one(rec, ASG_TAG, "p5-asg-tag-node-template/resources/nvidia.com/gpu")
    assert parent_of(rec, tag).type == "gpu-cluster:aws:EksGpuNodeGroup"
    labels = one(rec, NODE_GROUP, "p5").inputs["labels"]
    assert {k.removeprefix(TEMPLATE + "label/"): v for k, v in asg_tags(rec, "p5").items() if "/label/" in k} == labels


def test_system_node_group_asg_is_discoverable(rec):
    assert asg_tags(rec, "ml-system") == {
        "k8s.io/cluster-autoscaler/enabled": "true",
        "k8s.io/cluster-autoscaler/ml": "owned",
    }


def test_template_carries_extra_taints_labels_and_shared_gpu_counts():
    cfg = edits(
        EKS,
        {
            "nodePools[0].machineType": "g6e.xlarge",
            "nodePools[0].multiNode": False,
            "nodePools[0].labels": {"team": "infer"},
            "nodePools[0].taints": [{"key": "dedicated", "value": "inference", "effect": "NoExecute"}],
            "nodePools[0].gpuRuntime": {"sharing": {"mode": "mps", "replicas": 4}},
        },
    )
    tags = asg_tags(run_program(cfg), "p5")
    assert tags[TEMPLATE + "label/team"] == "infer"
    assert tags[TEMPLATE + "taint/dedicated"] == "inference:NoExecute"
    assert tags[TEMPLATE + "resources/nvidia.com/gpu"] == "4", "1 L40S shared by 4 MPS clients"
    assert TEMPLATE + "resources/vpc.amazonaws.com/efa" not in tags


def test_existing_cluster_gets_the_autoscaler_but_not_the_agent_or_a_node_selector():
    rec = run_program(edit(EKS, "cluster.mode", "existing"))
    assert of_type(rec, "aws:eks/addon:Addon") == [], "an existing cluster's add-ons are not ours"
    values = one(rec, RELEASE, "cluster-autoscaler").inputs["values"]
    assert "nodeSelector" not in values and values["tolerations"] == []
    assert values["image"]["tag"] == CLUSTER_AUTOSCALER_IMAGE_TAGS["1.36"], "version unknown offline: newest"
    assert asg_tags(rec, "p5")["k8s.io/cluster-autoscaler/ml"] == "owned"


def test_opting_out_installs_no_autoscaler_but_keeps_the_tags():
    rec = run_program(edits(EKS, {"cluster.mode": "existing", "cluster.clusterAutoscaler": False}))
    assert of_type(rec, "gpu-cluster:aws:ClusterAutoscaler") == []
    assert all(r.inputs["chart"] != "cluster-autoscaler" for r in of_type(rec, RELEASE))
    assert of_type(rec, "aws:eks/podIdentityAssociation:PodIdentityAssociation") == []
    assert asg_tags(rec, "p5")["k8s.io/cluster-autoscaler/enabled"] == "true"


def test_gke_has_no_cluster_autoscaler():
    rec = run_program(GKE)
    assert of_type(rec, "gpu-cluster:aws:ClusterAutoscaler") == [] and of_type(rec, ASG_TAG) == []


@pytest.mark.parametrize("version", EKS_VERSIONS)
def test_every_supported_eks_version_has_its_own_autoscaler_image(version):
    assert image_tag(version) == CLUSTER_AUTOSCALER_IMAGE_TAGS[version]
    assert image_tag(version).startswith(f"v{version}.")
    rec = run_program(edit(EKS, "cluster.kubernetesVersion", version))
    assert one(rec, RELEASE, "cluster-autoscaler").inputs["values"]["image"]["tag"] == image_tag(version)


def test_image_for_versions_outside_the_table_is_the_nearest():
    assert image_tag("1.31") == "v1.32.7" and image_tag("1.40") == "v1.36.1" and image_tag("v1.35.2-eks-3") == "v1.35.1"
    assert image_tag(None) == "v1.36.1"
