"""security-privileged-images-by-digest (mandatory) through the pack: a passing case, the violating change with the exact
message, and a waiver naming the resource. Against every example's real render: test_host_images_rendered.py."""

from __future__ import annotations

import pytest

from catalog.image_digests import DEPLOY_DIGEST
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


TCPXO_PLUGIN = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.14"


def installer_container(props):
    containers = props["spec"]["template"]["spec"]["initContainers"]
    return next(i for i, c in enumerate(containers) if c["image"].startswith(TCPXO_PLUGIN))


def test_the_tcpxo_installer_passes_with_its_image_resolved_at_deploy(pack):
    rs = recorded("gke-h100-512")
    installer = find(rs, DAEMONSET, "fabric-nccl-tcpxo-installer")
    props = wire(installer)
    # no public digest for this tag: offline, the registry's answer at deploy stands in (never a made-up digest)
    assert (
        props["spec"]["template"]["spec"]["initContainers"][installer_container(props)]["image"]
        == f"{TCPXO_PLUGIN}@{DEPLOY_DIGEST}"
    )
    assert ours(pack.resource(installer, rs), DIGESTS) == []


def _tcpxo_installer_by_tag(rs):
    """gke-h100-512's TCPXO installer with its plugin image named by tag alone."""
    installer = find(rs, DAEMONSET, "fabric-nccl-tcpxo-installer")
    props = wire(installer)
    return with_props(
        installer, edit(props, f"spec.template.spec.initContainers[{installer_container(props)}].image", TCPXO_PLUGIN)
    )


def test_the_tcpxo_installer_by_tag_alone_is_a_mandatory_violation_with_the_exact_message(pack):
    rs = recorded("gke-h100-512")
    broken = _tcpxo_installer_by_tag(rs)
    assert ours(pack.resource(broken, rs), DIGESTS) == [
        (
            DIGESTS,
            "mandatory",
            (
                "DaemonSet 'nccl-tcpxo-installer': host-level containers run images pinned by tag only, so whoever can move "
                "the tag runs code as root on the node · observed: spec.template.spec nccl-tcpxo-installer "
                "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.14 (hostPID, "
                "privileged, writes host path /var/lib, writes host path /home/kubernetes/bin, writes host path "
                "/home/kubernetes/bin/gpu-cluster) · required: every privileged or host-level container's image as "
                "<repository>[:tag]@sha256:<digest>\nFix: pin us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/"
                "nccl-plugin-gpudirecttcpx-dev:v1.0.14 by digest: write <repository>:<tag>@sha256:<digest> (crane digest "
                "<image>), or list the image in catalog/data/image-digests.csv with a digest an upstream manifest pins at a "
                "commit, or with none to have gpu-cluster resolve it from the registry at deploy"
            ),
        )
    ]


def test_the_deploy_time_stand_in_counts_only_for_images_the_catalog_resolves_at_deploy(pack):
    """``DEPLOY_DIGEST`` is accepted for exactly the rows resolved at deploy: not for another tag of the same image,
    not for an image the catalog does not list, not for a row with a cited digest; a literal digest always is."""
    rs = recorded("gke-h100-512")
    installer = find(rs, DAEMONSET, "fabric-nccl-tcpxo-installer")
    props = wire(installer)
    at = f"spec.template.spec.initContainers[{installer_container(props)}].image"
    for image in (
        TCPXO_PLUGIN.replace("v1.0.14", "v1.0.13"),
        "ghcr.io/example/installer:1.0",
        "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
    ):
        broken = with_props(installer, edit(props, at, f"{image}@{DEPLOY_DIGEST}"))
        assert [d[1] for d in ours(pack.resource(broken, rs), DIGESTS)] == ["mandatory"], image
    literal = with_props(installer, edit(props, at, f"{TCPXO_PLUGIN}@sha256:{'d' * 64}"))
    assert ours(pack.resource(literal, rs), DIGESTS) == []


def test_an_ubuntu_tag_in_the_hosts_namespaces_is_reported(pack):
    rs = recorded("gke-h100-512")
    installer = find(rs, DAEMONSET, "fabric-nccl-tcpxo-installer")
    props = wire(installer)
    inits = props["spec"]["template"]["spec"]["initContainers"]
    setup = next(i for i, c in enumerate(inits) if c["image"].startswith("docker.io/library/ubuntu:24.04@"))
    assert inits[setup]["image"].endswith(UBUNTU_DIGEST)  # as rendered: by digest
    broken = with_props(
        installer, edit(props, f"spec.template.spec.initContainers[{setup}].image", "docker.io/library/ubuntu:24.04")
    )
    message = ours(pack.resource(broken, rs), DIGESTS)[0][2]
    assert f"{inits[setup]['name']} docker.io/library/ubuntu:24.04 (hostPID, privileged)" in message


def test_slurmd_and_the_rxdm_sidecar_of_a_nodeset_are_read_from_the_release_values(pack):
    rs = recorded("gke-h100-512")
    release = find(rs, RELEASE, "slurm-slurm")
    props = wire(release)
    assert props["values"]["nodesetDefaults"]["slurmd"]["image"] == {
        "repository": "ghcr.io/slinkyproject/slurmd",
        "digest": DEPLOY_DIGEST,
    }
    assert ours(pack.resource(release, rs), DIGESTS) == []
    # the same release with slurmd and the RxDM sidecar back on their tags: both reported, from the values
    unpinned = edit(
        props,
        "values.nodesetDefaults.slurmd.image",
        {"repository": "ghcr.io/slinkyproject/slurmd", "tag": "26.05-ubuntu26.04"},
    )
    inits = unpinned["values"]["nodesets"]["h100-mega"]["podSpec"]["initContainers"]
    rxdm = next(i for i, c in enumerate(inits) if c["name"] == "tcpxo-daemon")
    unpinned = edit(
        unpinned,
        f"values.nodesets.h100-mega.podSpec.initContainers[{rxdm}].image",
        inits[rxdm]["image"].partition("@")[0],
    )
    message = ours(pack.resource(with_props(release, unpinned), rs), DIGESTS)[0][2]
    assert (
        "nodesets.h100-mega.slurmd.image slurmd ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04 (privileged, "
        "writes host path /dev/aperture_devices)" in message
    )
    assert (
        "nodesets.h100-mega.podSpec tcpxo-daemon us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/"
        "tcpgpudmarxd-dev:v1.0.20 (adds NET_ADMIN, writes host path /sys, writes host path /proc/sys)" in message
    )


def test_chart_defaults_count_when_the_values_set_no_image(pack):
    r = fake(RELEASE, "efa", {"chart": "aws-efa-k8s-device-plugin", "version": "v0.5.30", "values": {}})
    assert (
        "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.20 (writes host path "
        "/var/lib/kubelet/device-plugins)" in ours(pack.resource(r), DIGESTS)[0][2]
    )
    pinned = fake(
        RELEASE,
        "efa",
        {
            "chart": "aws-efa-k8s-device-plugin",
            "version": "v0.5.30",
            "values": {
                "image": {
                    "repository": "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin",
                    "tag": "v0.5.20@sha256:" + "c" * 64,
                }
            },
        },
    )
    assert ours(pack.resource(pinned), DIGESTS) == []


def test_a_waiver_naming_the_daemonset_silences_it(pack):
    rs = recorded("gke-h100-512")
    broken = _tcpxo_installer_by_tag(rs)
    assert ours(pack.resource(broken, rs), DIGESTS)  # violates without the waiver
    assert waived(pack, DIGESTS, "nccl-tcpxo-installer", broken, rs) == []


# -- secret-holding containers ----------------------------------------------------------------------------------
SLINKY = "ghcr.io/slinkyproject"


def test_the_slurm_key_holders_of_the_release_pass_by_digest_and_fail_on_their_tags(pack):
    """slurmctld, slurmrestd, slurmdbd, the login pods and the initconf that copies slurm.key get their keys from
    Slinky's operator, not from anything in the values: the rule reads them from catalog/data/
    secret-holding-images.csv, so a tag there (the chart's default, or the Alpine map) is a mandatory violation."""
    rs = recorded("gke-h100-512")
    release = find(rs, RELEASE, "slurm-slurm")
    props = wire(release)
    assert props["values"]["controller"]["slurmctld"]["image"] == {
        "repository": f"{SLINKY}/slurmctld",
        "digest": DEPLOY_DIGEST,
    }
    assert ours(pack.resource(release, rs), DIGESTS) == []
    unpinned = edit(
        props, "values.controller.slurmctld.image", {"repository": f"{SLINKY}/slurmctld", "tag": "26.05-ubuntu26.04"}
    )
    unpinned = edit(
        unpinned, "values.loginsets.login.initconf.image", {"repository": "docker.io/library/alpine", "tag": "3.22.2"}
    )
    del unpinned["values"]["accounting"]["slurmdbd"]  # the chart's default: a tag
    [(rule, level, message)] = ours(pack.resource(with_props(release, unpinned), rs), DIGESTS)
    assert level == "mandatory"
    assert (
        "host-level or secret-holding containers run images pinned by tag only, so whoever can move the tag "
        "reads the keys they hold" in message
    )
    assert (
        f"controller.slurmctld.image slurmctld {SLINKY}/slurmctld:26.05-ubuntu26.04 (holds slurm.key and the "
        "JWT key)" in message
    )
    assert (
        "loginsets.login.initconf.image login initconf docker.io/library/alpine:3.22.2 (holds slurm.key "
        "(copies it into /etc/slurm))" in message
    )
    assert (
        f"accounting.slurmdbd.image slurmdbd {SLINKY}/slurmdbd:26.05-ubuntu26.04 (holds slurm.key, the JWT "
        "key and the database password)" in message
    )


def test_a_switched_off_loginset_holds_no_key(pack):
    r = fake(
        RELEASE,
        "slurm",
        {
            "chart": "slurm",
            "version": "1.2.1",
            "values": {"controller": {"external": False}, "restapi": {}, "loginsets": {"login": {"enabled": False}}},
        },
    )
    message = ours(pack.resource(r), DIGESTS)[0][2]
    assert "slurmctld" in message and "slurmrestd" in message and "login" not in message
    assert "slurmdbd" not in message  # accounting off by the chart's default


def test_a_job_mounting_the_slurm_key_on_a_tag_is_a_violation(pack):
    rs = recorded("gke-h100-512")
    jobs = [
        r
        for r in rs
        if r.type == "kubernetes:batch/v1:Job"
        and wire(r)["spec"]["template"]["spec"]["containers"][0]["image"].startswith(f"{SLINKY}/login:")
    ]
    assert jobs, "the Slurm client Jobs"
    for job in jobs:
        props = wire(job)
        image = props["spec"]["template"]["spec"]["containers"][0]["image"]
        assert image == f"{SLINKY}/login:26.05-ubuntu26.04@{DEPLOY_DIGEST}"
        assert ours(pack.resource(job, rs), DIGESTS) == []
        broken = with_props(job, edit(props, "spec.template.spec.containers[0].image", image.partition("@")[0]))
        message = ours(pack.resource(broken, rs), DIGESTS)[0][2]
        assert f"{SLINKY}/login:26.05-ubuntu26.04 (mounts Secret slurm-auth-slurm)" in message


def test_a_database_password_in_the_env_on_a_tag_is_a_violation(pack):
    pod = {
        "containers": [
            {
                "name": "db",
                "image": "docker.io/library/mariadb:11.8",
                "env": [
                    {
                        "name": "MARIADB_PASSWORD",
                        "valueFrom": {"secretKeyRef": {"name": "db-password", "key": "password"}},
                    }
                ],
            }
        ]
    }
    r = fake("kubernetes:apps/v1:StatefulSet", "db", {"metadata": {"name": "db"}, "spec": {"template": {"spec": pod}}})
    assert "db docker.io/library/mariadb:11.8 (env from Secret db-password)" in ours(pack.resource(r), DIGESTS)[0][2]
    pod["containers"][0]["image"] += "@sha256:" + "e" * 64
    r = fake("kubernetes:apps/v1:StatefulSet", "db", {"metadata": {"name": "db"}, "spec": {"template": {"spec": pod}}})
    assert ours(pack.resource(r), DIGESTS) == []


@pytest.mark.parametrize(
    "stack, release, path, image",
    [
        ("gke-serving", "kueue-chart", "values.controllerManager.manager.image", "registry.k8s.io/kueue/kueue:v0.19.2"),
        (
            "gke-serving",
            "kubeflow-trainer",
            "values.image",
            "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0",
        ),
        ("gke-serving", "kubeflow-trainer", "values.jobset.image", "registry.k8s.io/jobset/jobset:v0.12.0"),
        ("gke-serving", "serving-lws", "values.image.manager", "registry.k8s.io/lws/lws:v0.10.0"),
        ("gke-serving", "serving-keda", "values.image.keda", "ghcr.io/kedacore/keda:2.20.2"),
        ("gke-serving", "serving-keda", "values.image.webhooks", "ghcr.io/kedacore/keda-admission-webhooks:2.20.2"),
        ("gke-h100-512", "slurm-operator", "values.operator.image", f"{SLINKY}/slurm-operator:1.2.1"),
        ("gke-h100-512", "slurm-operator", "values.webhook.image", f"{SLINKY}/slurm-operator-webhook:1.2.1"),
    ],
)
def test_a_cluster_operator_holding_keys_passes_by_digest_and_fails_on_its_charts_tag(
    pack, stack, release, path, image
):
    """The operators mount their webhook serving keys or read Secrets through their RBAC; the rule reads their
    images from catalog/data/secret-holding-images.csv: by the digest resolved at deploy they pass, and left to
    the chart's default (a release tag) each is a mandatory violation naming it."""
    rs = recorded(stack)
    r = find(rs, RELEASE, release)
    assert ours(pack.resource(r, rs), DIGESTS) == []
    props = wire(r)
    node = props
    for key in path.split(".")[:-1]:
        node = node[key]
    del node[path.split(".")[-1]]  # the chart's default: its release tag
    [(_, level, message)] = ours(pack.resource(with_props(r, props), rs), DIGESTS)
    assert level == "mandatory" and f"{path.removeprefix('values.')} " in message and f" {image} (" in message


@pytest.mark.parametrize(
    "type_, spec",
    [
        (
            "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
            lambda p: {"leaderWorkerTemplate": {"workerTemplate": {"spec": p}}},
        ),
        (
            "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet",
            lambda p: {"replicatedJobs": [{"template": {"spec": {"template": {"spec": p}}}}]},
        ),
        (
            "kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob",
            lambda p: {
                "runtimePatches": [
                    {
                        "trainingRuntimeSpec": {
                            "template": {
                                "spec": {"replicatedJobs": [{"template": {"spec": {"template": {"spec": p}}}}]}
                            }
                        }
                    }
                ]
            },
        ),
    ],
)
def test_a_secret_holder_on_a_tag_in_a_leaderworkerset_jobset_or_trainjob_is_a_violation(type_, spec):
    from policies.rule import Resource
    from policies.rules.security_privileged_images_by_digest import RULE

    pod = {
        "containers": [
            {
                "name": "c",
                "image": "evil.example/app:1",
                "env": [{"name": "K", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
            }
        ]
    }
    found, _ = RULE.evaluate(Resource(type_, "w", "urn:w", {"metadata": {"name": "w"}, "spec": spec(pod)}))
    assert len(found) == 1 and "evil.example/app:1" in found[0].message
    pod["containers"][0]["image"] = "evil.example/app:1@sha256:" + "a" * 64
    assert RULE.evaluate(Resource(type_, "w", "urn:w", {"metadata": {"name": "w"}, "spec": spec(pod)}))[0] == []
