"""security-privileged-images-by-digest (advisory) through the pack: a passing case, the violating change with the exact
message, and a waiver naming the resource. Against every example's real render: test_host_images_rendered.py."""
from __future__ import annotations

import pytest

from tests.support.policy.harness import Pack, example as recorded, fake, find, wire, with_props
from tests.support.spec.edit import edit

DIGESTS = "security-privileged-images-by-digest"
DAEMONSET, RELEASE = "kubernetes:apps/v1:DaemonSet", "kubernetes:helm.sh/v3:Release"
UBUNTU_DIGEST = "sha256:69cecf4bbf72d2d44a9eef1b71fb98c7fb973d78af11399deccef19beb008ad9"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def ours(diags, rule):
    return [d for d in diags if d[0] == rule]


def waived(pack, rule, resource, r, rs):
    pack.configure({rule: {"waivers": [{"rule": rule, "resource": resource, "reason": "tested on purpose here"}]}})
    try:
        return ours(pack.resource(r, rs), rule)
    finally:
        pack.configure()


# -- security-privileged-images-by-digest ----------------------------------------------------------------------
def test_a_host_level_daemonset_pinned_by_digest_passes(pack):
    rs = recorded("gke-kueue")
    injector = find(rs, DAEMONSET, "fabric-device-injector")  # privileged, hostPID: by digest upstream
    assert ours(pack.resource(injector, rs), DIGESTS) == []


def test_the_tcpxo_installer_names_its_tag_pinned_image_and_not_the_pinned_ones(pack):
    rs = recorded("gke-h100-512")
    installer = find(rs, DAEMONSET, "fabric-nccl-tcpxo-installer")
    assert ours(pack.resource(installer, rs), DIGESTS) == [(DIGESTS, "advisory", (
        "DaemonSet 'nccl-tcpxo-installer': host-level containers run images pinned by tag only, so whoever can move "
        "the tag runs code as root on the node · observed: spec.template.spec nccl-tcpxo-installer "
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.14 (hostPID, "
        "privileged, writes host path /var/lib, writes host path /home/kubernetes/bin, writes host path "
        "/home/kubernetes/bin/gpu-cluster) · required: every privileged or host-level container's image as "
        "<repository>[:tag]@sha256:<digest>\nFix: pin us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/"
        "nccl-plugin-gpudirecttcpx-dev:v1.0.14 by digest (crane digest <image>, or a digest an upstream manifest at a "
        "commit pins) and record the source in catalog/data"))]


def test_an_ubuntu_tag_in_the_hosts_namespaces_is_reported(pack):
    rs = recorded("gke-h100-512")
    installer = find(rs, DAEMONSET, "fabric-nccl-tcpxo-installer")
    props = wire(installer)
    inits = props["spec"]["template"]["spec"]["initContainers"]
    setup = next(i for i, c in enumerate(inits) if c["image"].startswith("docker.io/library/ubuntu:24.04@"))
    assert inits[setup]["image"].endswith(UBUNTU_DIGEST)  # as rendered: by digest
    broken = with_props(installer, edit(props, f"spec.template.spec.initContainers[{setup}].image",
                                        "docker.io/library/ubuntu:24.04"))
    message = ours(pack.resource(broken, rs), DIGESTS)[0][2]
    assert f"{inits[setup]['name']} docker.io/library/ubuntu:24.04 (hostPID, privileged)" in message


def test_slurmd_and_the_rxdm_sidecar_of_a_nodeset_are_read_from_the_release_values(pack):
    rs = recorded("gke-h100-512")
    release = find(rs, RELEASE, "slurm-slurm")
    message = ours(pack.resource(release, rs), DIGESTS)[0][2]
    assert "nodesets.h100-mega.slurmd.image slurmd ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04 (privileged, " \
           "writes host path /dev/aperture_devices)" in message
    assert "nodesets.h100-mega.podSpec tcpxo-daemon us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/" \
           "tcpgpudmarxd-dev:v1.0.20 (adds NET_ADMIN, writes host path /sys, writes host path /proc/sys)" in message
    # the chart's own digest value pins slurmd for every NodeSet that does not set an image
    pinned = with_props(release, edit(wire(release), "values.nodesetDefaults.slurmd.image",
                                      {"repository": "ghcr.io/slinkyproject/slurmd", "tag": "26.05-ubuntu26.04",
                                       "digest": "sha256:" + "b" * 64}))
    message = ours(pack.resource(pinned, rs), DIGESTS)[0][2]
    assert "slurmd ghcr.io" not in message and "tcpxo-daemon" in message


def test_chart_defaults_count_when_the_values_set_no_image(pack):
    r = fake(RELEASE, "efa", {"chart": "aws-efa-k8s-device-plugin", "version": "v0.5.30", "values": {}})
    assert "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.20 (writes host path " \
           "/var/lib/kubelet/device-plugins)" in ours(pack.resource(r), DIGESTS)[0][2]
    pinned = fake(RELEASE, "efa", {"chart": "aws-efa-k8s-device-plugin", "version": "v0.5.30", "values": {
        "image": {"repository": "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin",
                  "tag": "v0.5.20@sha256:" + "c" * 64}}})
    assert ours(pack.resource(pinned), DIGESTS) == []


def test_a_waiver_naming_the_daemonset_silences_it(pack):
    rs = recorded("gke-h100-512")
    installer = find(rs, DAEMONSET, "fabric-nccl-tcpxo-installer")
    assert waived(pack, DIGESTS, "nccl-tcpxo-installer", installer, rs) == []
