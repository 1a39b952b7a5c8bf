"""Pure pod-start facts: image references (registry, pinning, Artifact Registry), the defaults ``podStart`` gets, and
the nodeadm user data (unchanged bytes for a pool without ``podStart``)."""

from __future__ import annotations

import pytest

from catalog import Cloud
from stacks.plan.images import parse_image
from tests.support.spec.nodeadm_pinned import NODEADM_RAID0
from render.nodeadm import node_config_spec as _node_config_spec, nodeadm_user_data as _nodeadm_user_data
from stacks.plan.node_storage import instance_store_raid
from stacks.plan.pod_start import pod_start_plan
from stacks.spec.stack import NodePool


def node_config_spec(p: NodePool) -> dict:
    """nodeadm's NodeConfig spec from the pool's plan, as the EKS component renders it."""
    return _node_config_spec(pod_start_plan(Cloud.AWS, p), instance_store_raid(Cloud.AWS, p))


def nodeadm_user_data(p: NodePool) -> str | None:
    return _nodeadm_user_data(pod_start_plan(Cloud.AWS, p), instance_store_raid(Cloud.AWS, p))


DIGEST = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    "text, registry, path, pinned, in_ar",
    [
        ("ubuntu:24.04", "docker.io", "library/ubuntu", True, False),
        ("ubuntu", "docker.io", "library/ubuntu", False, False),
        ("nvidia/cuda:12.4.1-base-ubuntu22.04", "docker.io", "nvidia/cuda", True, False),
        ("nvcr.io/nvidia/pytorch:25.01-py3", "nvcr.io", "nvidia/pytorch", True, False),
        ("nvcr.io/nvidia/pytorch:latest", "nvcr.io", "nvidia/pytorch", False, False),
        ("localhost:5000/team/img:1", "localhost:5000", "team/img", True, False),
        (f"us-docker.pkg.dev/p/r/img@{DIGEST}", "us-docker.pkg.dev", "p/r/img", True, True),
        ("europe-west4-docker.pkg.dev/p/r/img:v2", "europe-west4-docker.pkg.dev", "p/r/img", True, True),
    ],
)
def test_image_references_parse_into_registry_path_and_pinning(text, registry, path, pinned, in_ar):
    image = parse_image(text)
    assert image is not None
    assert (image.registry, image.path, image.pinned, image.in_artifact_registry) == (registry, path, pinned, in_ar)


@pytest.mark.parametrize("text", ["UPPER/case:1", "a//b:1", "img:", "img@sha256:abc", "has space:1"])
def test_malformed_references_are_not_images(text):
    assert parse_image(text) is None


def pool(**extra) -> NodePool:
    return NodePool.model_validate(
        {"name": "p", "machineType": "p5.48xlarge", "zones": ["us-east-1a"], "maxNodes": 2, **extra}
    )


def test_without_pod_start_nothing_is_on_and_nodeadm_gets_only_raid0():
    plan = pod_start_plan(Cloud.AWS, pool())
    assert not (plan.streaming or plan.fast_image_pull or plan.prepull or plan.images)
    assert nodeadm_user_data(pool()) == NODEADM_RAID0


@pytest.mark.parametrize("cloud, streaming, fast", [(Cloud.GCP, True, False), (Cloud.AWS, False, True)])
def test_declaring_pod_start_turns_on_the_clouds_fast_pull(cloud, streaming, fast):
    plan = pod_start_plan(cloud, pool(podStart={"images": ["nvcr.io/nvidia/pytorch:25.01-py3"]}))
    assert (plan.streaming, plan.fast_image_pull) == (streaming, fast)


def test_one_parallel_pull_keeps_pulls_serial_and_off_turns_fast_pull_off():
    assert node_config_spec(pool(podStart={"maxParallelImagePulls": 1, "fastImagePull": False}))["kubelet"] == {
        "config": {"serializeImagePulls": True}
    }
    assert "featureGates" not in node_config_spec(pool(podStart={"fastImagePull": False}))
