"""Pod start (``podStart``, ``amiReleaseVersion``, ``cluster.imageMirrors``): each row pins the exact message a user
reads (config path, value, allowed, fix): pinned image references, settings of the other cloud refused, a secondary
boot disk with streaming and its images, AMI releases of the cluster's Kubernetes minor, mirror repositories and
credentials; and the warnings where a setting would not do what it promises."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from catalog import load_catalog
from preview.advice import deploy_advice
from tests.support.spec.edit import edit, edits
from tests.stacks.validate.test_fabric_errors import EKS, GKE
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

NGC = "nvcr.io/nvidia/pytorch:25.01-py3"
AR = "us-east4-docker.pkg.dev/ml-platform-prod/nvcr-io/nvidia/pytorch:25.01-py3"


def case(config: dict[str, Any], expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(config, textwrap.dedent(expected).strip("\n"), id=id)


ERRORS = [
    case(
        edit(GKE, "nodePools[0].podStart", {"images": ["nvcr.io/nvidia/pytorch"]}),
        """
        error: gpu-cluster:nodePools[0].podStart.images[0]: pool 'mega': no tag: a new node would pull whatever 'latest' is that day
          received: 'nvcr.io/nvidia/pytorch'
          allowed:  registry/path:tag or registry/path@sha256:<64 hex digits>
          fix:      pin a version, e.g. nvcr.io/nvidia/pytorch:<version>, or a digest""",
        id="untagged",
    ),
    case(
        edit(GKE, "nodePools[0].podStart", {"images": ["nvcr.io/nvidia/pytorch:latest"]}),
        """
        error: gpu-cluster:nodePools[0].podStart.images[0]: pool 'mega': tag 'latest' is not pinned: it moves, so nodes disagree on what they run
          received: 'nvcr.io/nvidia/pytorch:latest'
          allowed:  any tag but latest, or a digest
          fix:      pin a version tag or a digest""",
        id="latest",
    ),
    case(
        edit(GKE, "nodePools[0].podStart", {"images": ["NVCR.io/Nvidia/PyTorch 25"]}),
        """
        error: gpu-cluster:nodePools[0].podStart.images[0]: pool 'mega': not a container image reference
          received: 'NVCR.io/Nvidia/PyTorch 25'
          allowed:  registry/path:tag or registry/path@sha256:<64 hex digits>
          fix:      write the image as a job's pod spec names it, with its tag""",
        id="not-a-reference",
    ),
    case(
        edit(EKS, "nodePools[0].podStart", {"prepull": True}),
        """
        error: gpu-cluster:nodePools[0].podStart.prepull: pool 'p5': nothing to pre-pull: images is empty
          received: true
          allowed:  prepull with images
          fix:      list the pool's job images in podStart.images, or remove prepull""",
        id="prepull-without-images",
    ),
    case(
        edit(EKS, "nodePools[0].podStart", {"images": [NGC], "imageStreaming": True}),
        """
        error: gpu-cluster:nodePools[0].podStart.imageStreaming: pool 'p5': imageStreaming is a GKE setting
          received: true
          allowed:  no imageStreaming on EKS
          fix:      remove podStart.imageStreaming from this pool""",
        id="streaming-on-eks",
    ),
    case(
        edit(EKS, "nodePools[0].podStart", {"images": [NGC], "secondaryBootDisk": {"diskImage": "global/images/x"}}),
        """
        error: gpu-cluster:nodePools[0].podStart.secondaryBootDisk: pool 'p5': secondaryBootDisk is a GKE setting
          received: {"diskImage": "global/images/x"}
          allowed:  no secondaryBootDisk on EKS
          fix:      remove podStart.secondaryBootDisk from this pool""",
        id="boot-disk-on-eks",
    ),
    case(
        edit(GKE, "nodePools[0].podStart", {"fastImagePull": True}),
        """
        error: gpu-cluster:nodePools[0].podStart.fastImagePull: pool 'mega': fastImagePull is an EKS setting
          received: true
          allowed:  no fastImagePull on GKE
          fix:      remove podStart.fastImagePull from this pool""",
        id="fast-pull-on-gke",
    ),
    case(
        edit(GKE, "nodePools[0].podStart", {"maxParallelImagePulls": 8}),
        """
        error: gpu-cluster:nodePools[0].podStart.maxParallelImagePulls: pool 'mega': outside GKE's kubelet range
          received: 8
          allowed:  2-5 on GKE
          fix:      set maxParallelImagePulls between 2 and 5, or remove it""",
        id="gke-parallel-pulls",
    ),
    case(
        edit(
            GKE,
            "nodePools[0].podStart",
            {
                "images": ["us-east4-docker.pkg.dev/p/r/i:1"],
                "imageStreaming": False,
                "secondaryBootDisk": {"diskImage": "global/images/torch"},
            },
        ),
        """
        error: gpu-cluster:nodePools[0].podStart.imageStreaming: pool 'mega': a secondary boot disk needs image streaming (gcfs_config enabled)
          received: false
          allowed:  true, or omitted, with secondaryBootDisk
          fix:      remove imageStreaming: false, or remove secondaryBootDisk""",
        id="boot-disk-without-streaming",
    ),
    case(
        edit(
            GKE,
            "nodePools[0].podStart",
            {"images": ["us-east4-docker.pkg.dev/p/r/i:1"], "secondaryBootDisk": {"diskImage": "torch-cache"}},
        ),
        """
        error: gpu-cluster:nodePools[0].podStart.secondaryBootDisk.diskImage: pool 'mega': not a Compute Engine disk image name
          received: 'torch-cache'
          allowed:  global/images/<name> or projects/<project>/global/images/<name>
          fix:      name the image gke-disk-image-builder created""",
        id="boot-disk-name",
    ),
    case(
        edits(
            GKE,
            {
                "cluster.minMasterVersion": "1.28.3-gke.1066000",
                "nodePools[0].multiNode": False,
                "nodePools[0].podStart": {"images": [AR], "secondaryBootDisk": {"diskImage": "global/images/torch"}},
            },
        ),
        """
        error: gpu-cluster:cluster.minMasterVersion: pool 'mega' has a secondary boot disk, which GKE supports from 1.28.3-gke.1067000
          received: '1.28.3-gke.1066000'
          allowed:  1.28.3-gke.1067000 or later
          fix:      raise minMasterVersion to at least 1.28.3-gke.1067000, or remove the pool's secondaryBootDisk""",
        id="boot-disk-gke-version",
    ),
    case(
        edit(GKE, "nodePools[0].podStart", {"secondaryBootDisk": {"diskImage": "global/images/torch"}}),
        """
        error: gpu-cluster:nodePools[0].podStart.secondaryBootDisk: pool 'mega': the images the disk holds are not declared
          received: 'global/images/torch'
          allowed:  secondaryBootDisk with podStart.images
          fix:      list the images the disk image holds in podStart.images""",
        id="boot-disk-without-images",
    ),
    case(
        edit(GKE, "nodePools[0].amiReleaseVersion", "1.35.2-20260304"),
        """
        error: gpu-cluster:nodePools[0].amiReleaseVersion: pool 'mega': an EKS setting: GKE nodes run the node version GKE upgrades them to
          received: '1.35.2-20260304'
          allowed:  no amiReleaseVersion on GKE
          fix:      remove amiReleaseVersion (cluster.maintenance controls GKE upgrades)""",
        id="ami-on-gke",
    ),
    case(
        edit(EKS, "nodePools[0].amiReleaseVersion", "v20260304"),
        """
        error: gpu-cluster:nodePools[0].amiReleaseVersion: pool 'p5': not an EKS AMI release version
          received: 'v20260304'
          allowed:  <kubernetes version>-<YYYYMMDD>, e.g. 1.35.2-20260304
          fix:      copy releaseVersion from aws eks describe-nodegroup or the AMI release notes""",
        id="ami-format",
    ),
    case(
        edit(EKS, "nodePools[0].amiReleaseVersion", "1.33.5-20260304"),
        """
        error: gpu-cluster:nodePools[0].amiReleaseVersion: pool 'p5': built for Kubernetes 1.33, the cluster runs 1.35
          received: '1.33.5-20260304'
          allowed:  a 1.35.x release
          fix:      pick an AMI release for Kubernetes 1.35""",
        id="ami-minor",
    ),
    case(
        edit(EKS, "cluster.imageMirrors", [{"upstream": "nvcr.io"}]),
        """
        error: gpu-cluster:cluster.imageMirrors[0]: Artifact Registry mirrors are a GKE setting
          received: 'nvcr.io'
          allowed:  no imageMirrors on EKS
          fix:      remove imageMirrors (on EKS, pull through an ECR pull-through cache you manage)""",
        id="mirror-on-eks",
    ),
    case(
        edit(GKE, "cluster.imageMirrors", [{"upstream": "nvcr.io"}, {"upstream": "nvcr.io", "repository": "ngc"}]),
        """
        error: gpu-cluster:cluster.imageMirrors[1].upstream: mirrored twice
          received: 'nvcr.io'
          allowed:  each upstream once
          fix:      remove the second mirror of this upstream""",
        id="mirror-twice",
    ),
    case(
        edit(GKE, "cluster.imageMirrors", [{"upstream": "docker.io"}]),
        """
        error: gpu-cluster:cluster.imageMirrors[0].upstream: not one of the allowed values
          received: 'docker.io'
          allowed:  nvcr.io, ghcr.io
          fix:      did you mean 'nvcr.io'?""",
        id="mirror-upstream",
    ),
    case(
        edit(GKE, "cluster.imageMirrors", [{"upstream": "ghcr.io", "repository": "GHCR_io"}]),
        """
        error: gpu-cluster:cluster.imageMirrors[0].repository: not an Artifact Registry repository ID
          received: 'GHCR_io'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 63 characters
          fix:      rename the repository, e.g. 'nvcr-io'""",
        id="mirror-repository",
    ),
    case(
        edit(GKE, "cluster.imageMirrors", [{"upstream": "nvcr.io", "username": "$oauthtoken"}]),
        """
        error: gpu-cluster:cluster.imageMirrors[0].passwordSecretVersion: upstream credentials need both username and passwordSecretVersion
          received: '$oauthtoken'
          allowed:  both (private images) or neither (anonymous pulls of public images)
          fix:      add the missing one, or remove both""",
        id="mirror-half-credentials",
    ),
    case(
        edit(
            GKE,
            "cluster.imageMirrors",
            [{"upstream": "nvcr.io", "username": "$oauthtoken", "passwordSecretVersion": "nvapi-abc123"}],
        ),
        """
        error: gpu-cluster:cluster.imageMirrors[0].passwordSecretVersion: not a Secret Manager secret version (the value is not shown: it may be the key itself)
          allowed:  projects/<project>/secrets/<secret>/versions/<version>
          fix:      name the secret version holding the password or API key, never the key itself""",
        id="mirror-secret-form",
    ),
]


@pytest.mark.parametrize("config,expected", ERRORS)
def test_bad_pod_start_settings_are_refused_with_the_exact_message(config, expected):
    with pytest.raises(SpecError) as exc:
        load_spec(config)
    assert [str(i) for i in exc.value.errors] == [expected]


def test_every_bad_image_of_a_pool_is_reported_at_once():
    config = edit(GKE, "nodePools[0].podStart", {"images": ["a/b", "c/d:latest", AR, "E F"], "prepull": True})
    with pytest.raises(SpecError) as exc:
        load_spec(config)
    assert [e.path for e in exc.value.errors] == [f"gpu-cluster:nodePools[0].podStart.images[{i}]" for i in (0, 1, 3)]


def warnings_of(config: dict[str, Any]) -> list[str]:
    return [str(w) for w in load_spec(config)[1]]


def test_gke_warns_about_each_image_streaming_cannot_stream_with_the_way_to_fix_it():
    images = [NGC, "ghcr.io/org/img:1", "docker.io/x/y:2", AR]
    assert warnings_of(edit(GKE, "nodePools[0].podStart", {"images": images})) == [
        textwrap.dedent(w).strip()
        for w in (
            """
        warning: gpu-cluster:nodePools[0].podStart.images[0]: pool 'mega': not in Artifact Registry, so image streaming cannot stream it: a new node pulls it in full from nvcr.io
          received: 'nvcr.io/nvidia/pytorch:25.01-py3'
          allowed:  <region>-docker.pkg.dev/… images
          fix:      mirror nvcr.io with cluster.imageMirrors""",
            """
        warning: gpu-cluster:nodePools[0].podStart.images[1]: pool 'mega': not in Artifact Registry, so image streaming cannot stream it: a new node pulls it in full from ghcr.io
          received: 'ghcr.io/org/img:1'
          allowed:  <region>-docker.pkg.dev/… images
          fix:      mirror ghcr.io with cluster.imageMirrors""",
            """
        warning: gpu-cluster:nodePools[0].podStart.images[2]: pool 'mega': not in Artifact Registry, so image streaming cannot stream it: a new node pulls it in full from docker.io
          received: 'docker.io/x/y:2'
          allowed:  <region>-docker.pkg.dev/… images
          fix:      push it to an Artifact Registry repository""",
        )
    ]


def test_with_a_mirror_the_warning_names_the_artifact_registry_reference_to_use():
    config = edits(GKE, {"nodePools[0].podStart": {"images": [NGC]}, "cluster.imageMirrors": [{"upstream": "nvcr.io"}]})
    assert [w.fix for w in load_spec(config)[1]] == [f"reference it as {AR} (the mirror of nvcr.io this stack creates)"]


@pytest.mark.parametrize(
    "pod_start",
    [{"images": [AR]}, {"images": [NGC], "imageStreaming": False}],
    ids=["artifact-registry", "streaming-off"],
)
def test_no_streaming_warning_where_streaming_applies_or_is_off(pod_start):
    assert warnings_of(edit(GKE, "nodePools[0].podStart", pod_start)) == []


def test_fast_image_pull_warns_about_a_root_volume_too_slow_for_parallel_unpack():
    config = edits(
        EKS,
        {
            "nodePools[0].machineType": "g6e.xlarge",
            "nodePools[0].multiNode": False,
            "nodePools[0].podStart": {"images": [NGC]},
            "nodePools[0].rootVolume": {"throughputMiBps": 250},
        },
    )
    assert warnings_of(config) == [
        textwrap.dedent("""
        warning: gpu-cluster:nodePools[0].rootVolume.throughputMiBps: pool 'p5': too slow for parallel unpack: fast image pull writes layers at once
          received: 250
          allowed:  600-1000 MiB/s
          fix:      raise throughputMiBps (and iops) or remove it (default 1000 MiB/s)""").strip()
    ]
    assert warnings_of(edit(config, "nodePools[0].podStart.fastImagePull", False)) == []


def test_an_unpinned_eks_ami_is_preview_advice_and_a_pinned_one_is_not():
    def advice(config: dict[str, Any]) -> list[str]:
        return [str(a) for a in deploy_advice(load_spec(config)[0], load_catalog()) if "amiReleaseVersion" in a.path]

    assert advice(EKS) == [
        textwrap.dedent("""
        warning: gpu-cluster:nodePools[0].amiReleaseVersion: pool 'p5': not pinned: EKS uses the newest AMI release whenever the node group is created or updated, so the fleet's AMI changes with no change in this file
          allowed:  an EKS AMI release, e.g. 1.35.2-20260304
          fix:      pin the release the pool runs (aws eks describe-nodegroup: releaseVersion)""").strip()
    ]
    assert advice(edit(EKS, "nodePools[0].amiReleaseVersion", "1.35.2-20260304")) == []
    assert advice(GKE) == []


@pytest.mark.parametrize(
    "config",
    [
        edit(
            GKE,
            "nodePools[0].podStart",
            {
                "images": [AR],
                "prepull": True,
                "maxParallelImagePulls": 3,
                "secondaryBootDisk": {"diskImage": "projects/ml-images/global/images/torch-2501"},
            },
        ),
        edits(
            GKE,
            {
                "cluster.imageMirrors": [
                    {
                        "upstream": "nvcr.io",
                        "username": "$oauthtoken",
                        "passwordSecretVersion": "projects/p1/secrets/ngc/versions/2",
                    },
                    {"upstream": "ghcr.io", "repository": "github"},
                ]
            },
        ),
        edits(
            EKS,
            {
                "nodePools[0].podStart": {
                    "images": [NGC, f"{NGC.split(':')[0]}@sha256:{'a' * 64}"],
                    "prepull": True,
                    "maxParallelImagePulls": 10,
                },
                "nodePools[0].amiReleaseVersion": "1.35.2-20260304",
            },
        ),
    ],
    ids=["gke", "gke-mirrors", "eks"],
)
def test_valid_pod_start_settings_load_without_warnings(config):
    assert warnings_of(config) == []
