"""The preview says how every host-level image is pinned (JSON ``hostImages``, text "Host-level images"): a cited
digest as it is, a tag gpu-cluster resolves at deploy as "digest resolved from <registry> at deploy" with no digest
(there is no registry offline: nothing made up is shown as real), a tag alone as "tag only"."""

from __future__ import annotations

import dataclasses
import json

import pytest

from catalog.image_digests import DEPLOY_DIGEST
from preview.policy.image_pins import host_image_pins
from preview.render.text import render_text
from preview.run import preview_stack

RXDM = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.20"
INJECTOR_DIGEST = "sha256:6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970"


@pytest.fixture(scope="module")
def h100():
    return preview_stack("gke-h100-512")


def test_json_names_each_host_level_image_and_its_pin(h100):
    rows = {r["image"]: r for r in h100.as_dict()["hostImages"]}
    assert rows[RXDM]["pin"] == "digest resolved from us-docker.pkg.dev at deploy"
    assert rows[RXDM]["digest"] is None and rows[RXDM]["resolvedAtDeploy"] is True
    assert rows[RXDM]["containers"] == ["slurm-slurm: tcpxo-daemon"]
    slurmd = rows["ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04"]  # the chart drops the tag: the catalog's row
    assert slurmd["pin"] == "digest resolved from ghcr.io at deploy"
    injector = rows["gcr.io/gke-release/nri-device-injector"]
    assert (injector["pin"], injector["digest"]) == ("digest", INJECTOR_DIGEST)
    assert DEPLOY_DIGEST not in json.dumps(h100.as_dict()["hostImages"])
    assert {r["pin"] for r in rows.values()} == {
        "digest",
        "digest resolved from us-docker.pkg.dev at deploy",
        "digest resolved from ghcr.io at deploy",
    }


def test_text_says_resolved_at_deploy_and_counts(h100):
    text = render_text(h100, color=False, width=400)
    assert "Host-level images (privileged or host access): 6, 6 by digest (3 resolved at deploy), 0 by tag only" in text
    assert f"  {RXDM}: digest resolved from us-docker.pkg.dev at deploy (slurm-slurm: tcpxo-daemon)" in text


def test_a_tag_alone_is_shown_as_tag_only(h100):
    """The same resources with the RxDM sidecar back on its tag (as before this pinning): shown as "tag only"."""
    release = next(r for r in h100.resources if r.name == "slurm-slurm")
    text = json.dumps(release.inputs).replace(f"{RXDM}@{DEPLOY_DIGEST}", RXDM)
    edited = dataclasses.replace(release, inputs=json.loads(text))
    rows = {r["image"]: r for r in host_image_pins([edited])}
    assert rows[RXDM]["pin"] == "tag only" and rows[RXDM]["digest"] is None
