"""Pod start in the offline preview: gke-kueue streams from its nvcr.io mirror, pre-pulls on h100 and preloads from a
secondary boot disk on l4; eks-kueue pulls with SOCI fast pull on a pinned AMI; the JSON key and the text table say
per pool what speeds up a pod's start and what a cold node pulls; the mirror and DaemonSets are among the resources."""

from __future__ import annotations

import json

import pytest

from preview.render.text import render_text
from preview.run import preview_stack

MIRRORED = "us-central1-docker.pkg.dev/ml-platform-prod/nvcr-io/nvidia/pytorch:25.01-py3"


@pytest.fixture(scope="module")
def gke():
    return preview_stack("gke-kueue")


@pytest.fixture(scope="module")
def eks():
    return preview_stack("eks-kueue")


def rows(report) -> dict:
    doc = json.loads(json.dumps(report.as_dict(), default=str))  # strict JSON, as --format json prints it
    return {r["pool"]: r for r in doc["podStart"]}


def test_gke_kueue_streams_pre_pulls_and_preloads(gke):
    assert gke.exit_code == 0
    h100, l4 = rows(gke)["h100"], rows(gke)["l4"]
    assert h100["accelerators"] == [
        "image streaming (Artifact Registry images)",
        "images on local SSDs",
        "pre-pull DaemonSet prepull-h100 (1 image)",
    ]
    assert h100["images"] == [
        {
            "image": MIRRORED,
            "registry": "us-central1-docker.pkg.dev",
            "coldStart": "streamed from Artifact Registry (starts before the full download); pulled by the "
            "pre-pull DaemonSet as the node joins",
        }
    ]
    assert l4["accelerators"][1] == "secondary boot disk global/images/triton-2501-cache (CONTAINER_IMAGE_CACHE)"
    assert l4["images"][0]["coldStart"] == "preloaded from the secondary boot disk (if the disk image holds it)"
    types = {(r.type, r.name) for r in gke.resources}
    assert ("gcp:artifactregistry/repository:Repository", "images-nvcr-io") in types
    assert ("kubernetes:apps/v1:DaemonSet", "image-prepull-h100") in types
    assert not [w for w in gke.warnings if "podStart" in w.path]


def test_eks_kueue_pulls_in_parallel_on_a_pinned_ami(eks):
    p5, l40s = rows(eks)["p5"], rows(eks)["l40s"]
    assert p5["amiReleaseVersion"] == "1.35.2-20260304"
    assert p5["accelerators"][:2] == [
        "SOCI parallel pull/unpack (nodeadm FastImagePull)",
        "parallel image pulls (unlimited)",
    ]
    assert p5["images"][0]["coldStart"] == (
        "full pull from nvcr.io (SOCI parallel pull and unpack); pulled by the pre-pull DaemonSet as the node joins"
    )
    assert l40s["images"] == [] and l40s["accelerators"] == ["gp3 root 1000 MiB/s, 4000 IOPS"]
    assert not [w for w in eks.warnings if "amiReleaseVersion" in w.path]


def test_the_text_preview_has_a_pod_start_table(gke, eks):
    text = render_text(eks, color=False, width=220)
    assert "Pod start (what a job's pod waits for on a new node)" in text
    assert "no images declared (podStart.images): a new node pulls every job image in full" in text
    assert "AMI release 1.35.2-20260304 (pinned)" in text
    assert "prepull-h100" in render_text(gke, color=False, width=220)
