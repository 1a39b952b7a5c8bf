"""Pod start under mocks: GKE image streaming, secondary boot disk, kubelet pulls, the Container File System API and
Artifact Registry mirrors; EKS nodeadm user data and the pinned AMI release; the pre-pull DaemonSet on both clouds,
valid against the Kubernetes schema. Every run uses ``preview=False``: the apply-derived inputs each test also reads
(node service-account email, launch-template version) prove the applies ran."""

from __future__ import annotations

import base64

import kubernetes_validate
import pytest

from preview.engine import run_program
from render.nodeadm import toolkit_script_part
from tests.support.spec.nodeadm_pinned import NODEADM_RAID0
from tests.support.spec.edit import edit, edits
from tests.support.kube.schema import K8S_VERSION
from tests.support.preview.recorded import of_type, one
from tests.support.spec.stack_configs import EKS, GKE

NODE_POOL = "gcp:container/nodePool:NodePool"
SERVICE = "gcp:projects/service:Service"
REPOSITORY = "gcp:artifactregistry/repository:Repository"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
NAMESPACE = "kubernetes:core/v1:Namespace"
IMAGE = "us-central1-docker.pkg.dev/test-project-1/nvcr-io/nvidia/pytorch:25.01-py3"
NGC = "nvcr.io/nvidia/pytorch:25.01-py3"


def node_config(rec) -> dict:
    pool = one(rec, NODE_POOL, "h100")
    assert pool.inputs["nodeConfig"]["serviceAccount"].endswith(".iam.gserviceaccount.com")  # an apply ran
    return pool.inputs["nodeConfig"]


def user_data(rec) -> str | None:
    lt = one(rec, LAUNCH_TEMPLATE, "p5-lt")
    assert isinstance(one(rec, NODE_GROUP, "p5").inputs["launchTemplate"]["version"], str)  # the apply ran
    encoded = lt.inputs.get("userData")
    return None if encoded is None else base64.b64decode(encoded).decode()


def test_a_gke_pool_without_pod_start_keeps_its_node_config_and_creates_no_api_or_prepull():
    rec = run_program(GKE)
    config = node_config(rec)
    assert not {"gcfsConfig", "secondaryBootDisks", "kubeletConfig"} & set(config)
    assert of_type(rec, SERVICE) == [] and not [d for d in of_type(rec, DAEMONSET) if "prepull" in d.name]


def test_gke_pod_start_streams_preloads_and_sets_parallel_pulls_after_the_streaming_api():
    rec = run_program(
        edit(
            GKE,
            "nodePools[0].podStart",
            {
                "images": [IMAGE],
                "secondaryBootDisk": {"diskImage": "global/images/torch-cache"},
                "maxParallelImagePulls": 4,
            },
        )
    )
    config = node_config(rec)
    assert config["gcfsConfig"] == {"enabled": True}
    assert config["secondaryBootDisks"] == [{"diskImage": "global/images/torch-cache", "mode": "CONTAINER_IMAGE_CACHE"}]
    assert config["kubeletConfig"] == {"maxParallelImagePulls": 4}
    api = one(rec, SERVICE, "images-containerfilesystem")
    assert api.inputs == {
        "project": "test-project-1",
        "service": "containerfilesystem.googleapis.com",
        "disableOnDestroy": False,
    }
    assert api.urn in one(rec, NODE_POOL, "h100").dependencies


def test_image_streaming_off_leaves_gcfs_out_and_needs_no_api():
    rec = run_program(edit(GKE, "nodePools[0].podStart", {"images": [IMAGE], "imageStreaming": False}))
    assert "gcfsConfig" not in node_config(rec) and of_type(rec, SERVICE) == []


def test_a_mirror_is_a_remote_docker_repository_on_its_upstream_with_secret_manager_credentials():
    secret = "projects/test-project-1/secrets/ngc-key/versions/1"
    rec = run_program(
        edit(
            GKE,
            "cluster.imageMirrors",
            [
                {"upstream": "nvcr.io", "username": "$oauthtoken", "passwordSecretVersion": secret},
                {"upstream": "ghcr.io", "repository": "github"},
            ],
        )
    )
    nvcr = one(rec, REPOSITORY, "images-nvcr-io").inputs
    assert (nvcr["repositoryId"], nvcr["format"], nvcr["mode"], nvcr["location"]) == (
        "nvcr-io",
        "DOCKER",
        "REMOTE_REPOSITORY",
        "us-central1",
    )
    assert nvcr["remoteRepositoryConfig"] == {
        "description": "nvcr.io, mirrored by gpu-cluster",
        "commonRepository": {"uri": "https://nvcr.io"},
        "upstreamCredentials": {
            "usernamePasswordCredentials": {"username": "$oauthtoken", "passwordSecretVersion": secret}
        },
    }
    ghcr = one(rec, REPOSITORY, "images-github").inputs["remoteRepositoryConfig"]
    assert ghcr == {"description": "ghcr.io, mirrored by gpu-cluster", "commonRepository": {"uri": "https://ghcr.io"}}
    api = one(rec, SERVICE, "images-artifactregistry")
    assert api.urn in one(rec, REPOSITORY, "images-github").dependencies
    assert of_type(rec, NODE_POOL) and "gcfsConfig" not in node_config(rec)  # a mirror alone rolls no pool


def test_an_eks_pool_without_pod_start_keeps_the_raid0_user_data_byte_for_byte():
    """A changed user data rolls every node: the RAID0 NodeConfig stays byte for byte; the one addition is the device
    plugin pool's toolkit lockdown, a part of its own after it (a deliberate roll, docs/security.md)."""
    tail = "\n--GPUCLUSTER--\n"
    assert NODEADM_RAID0.endswith(tail)
    assert user_data(run_program(EKS)) == NODEADM_RAID0.removesuffix(tail) + "\n" + toolkit_script_part() + tail
    assert "releaseVersion" not in one(run_program(EKS), NODE_GROUP, "p5").inputs


def test_eks_pod_start_turns_on_fast_image_pull_and_parallel_pulls_and_pins_the_ami():
    rec = run_program(
        edits(
            EKS,
            {
                "nodePools[0].podStart": {"images": [NGC], "maxParallelImagePulls": 4},
                "nodePools[0].amiReleaseVersion": "1.35.2-20260304",
            },
        )
    )
    data = user_data(rec)
    assert data is not None
    assert "  featureGates:\n    FastImagePull: true\n" in data
    assert "  instance:\n    localStorage:\n      strategy: RAID0\n" in data
    assert "  kubelet:\n    config:\n      serializeImagePulls: false\n      maxParallelImagePulls: 4\n" in data
    assert one(rec, NODE_GROUP, "p5").inputs["releaseVersion"] == "1.35.2-20260304"


def test_fast_image_pull_off_on_a_machine_without_instance_store_asks_nodeadm_for_nothing():
    """The NodeConfig part is empty (no FastImagePull, no RAID0, kubelet untouched); what user data is left is the
    device plugin pool's toolkit lockdown (render/nodeadm.py), nothing of the pod-start plan."""
    rec = run_program(
        edits(
            EKS,
            {
                "nodePools[0].machineType": "g6e.xlarge",
                "nodePools[0].multiNode": False,
                "nodePools[0].podStart": {"images": [NGC], "fastImagePull": False},
            },
        )
    )
    data = user_data(rec)
    assert data is not None and "kind: NodeConfig\nspec: {}\n" in data
    for pod_start in ("FastImagePull", "localStorage", "serializeImagePulls", "maxParallelImagePulls"):
        assert pod_start not in data


@pytest.mark.parametrize("base, pool", [(GKE, "h100"), (EKS, "p5")], ids=["gke", "eks"])
def test_the_prepull_daemonset_pulls_each_image_on_the_pool_tolerating_its_taints_and_is_valid(base, pool):
    taint = {"key": "dedicated", "value": "training", "effect": "NoSchedule"}
    rec = run_program(
        edits(
            base, {"nodePools[0].taints": [taint], "nodePools[0].podStart": {"images": [NGC, IMAGE], "prepull": True}}
        )
    )
    ds = one(rec, DAEMONSET, f"image-prepull-{pool}").inputs
    spec = ds["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"gpu-cluster/pool": pool}
    assert spec["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Equal", "value": "training", "effect": "NoSchedule"},
    ]
    assert [c["image"] for c in spec["initContainers"]] == [NGC, IMAGE]
    assert all("nvidia.com/gpu" not in str(c["resources"]) for c in spec["initContainers"] + spec["containers"])
    ns = one(rec, NAMESPACE, "image-prepull-namespace").inputs
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    kubernetes_validate.validate(ds, K8S_VERSION, strict=True)
    kubernetes_validate.validate({"apiVersion": "v1", "kind": "Namespace", **ns}, K8S_VERSION, strict=True)


def test_the_schema_check_can_fail_on_a_broken_prepull_daemonset():
    rec = run_program(edit(GKE, "nodePools[0].podStart", {"images": [IMAGE], "prepull": True}))
    ds = one(rec, DAEMONSET, "image-prepull-h100").inputs
    broken = {
        **ds,
        "spec": {
            **ds["spec"],
            "template": {
                **ds["spec"]["template"],
                "spec": {
                    **ds["spec"]["template"]["spec"],
                    "initContainers": [{"name": "pull-0", "image": IMAGE, "command": "sh"}],
                },
            },
        },
    }
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)
