"""The deploy-time digest resolution is wired (components/image_digests.py): running the real program under the
recording engine, the Docker provider's getRegistryImage invoke is called once per image the catalog resolves at
deploy, through a provider that needs no Docker daemon (and an ECR login for the EKS registry), and the digest it
answers lands in the objects and Helm values: in the installers, RxDM sidecars, the admission policy that admits
them, slurmd, the device and DRA plugins and the GPU Operator's operands.

The mocked invoke answers a per-image value made up here (``fake_digest``) so each image's answer can be traced;
the offline preview answers ``DEPLOY_DIGEST`` instead (preview/engine.py) and never shows a made-up digest."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from catalog.image_digests import DEPLOY_DIGEST, load_image_digests
from stacks.plan.host_access import host_containers, pod_specs
from policies.host_images import seen_host_containers, seen_secret_containers
from preview.engine import run_program
from preview.mocks.cloud import RecordingMocks
from tests.support.helm.render import plain
from tests.support.spec.gpu_runtime_matrix import config

TOKEN = "docker:index/getRegistryImage:getRegistryImage"
ECR_TOKEN = "aws:ecr/getAuthorizationToken:getAuthorizationToken"
STACKS = (
    "gke-h100-512",
    "gke-kueue",
    "gke-a3-ultra-rdma",
    "gke-a4x-nvl72",
    "eks-p6e-gb200",
    "gke-operator-mig",
    "gke-serving",
)  # gke-serving: the default vLLM image, which runs as the model bucket's reader
"""Together they run every image the catalog resolves at deploy (checked below)."""


def fake_digest(image: str) -> str:
    """A test-only stand-in, distinct per image, so the test can follow each answer into the objects."""
    return "sha256:" + hashlib.sha256(f"test-only {image}".encode()).hexdigest()


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[list[Any], list[dict[str, Any]]]]:
    """stack -> (its recorded resources, the invokes the program made), with the Docker lookup answering
    ``fake_digest``."""
    out = {}
    original = RecordingMocks.call
    for stack in STACKS:
        calls: list[dict[str, Any]] = []

        def call(self, args, calls=calls):
            calls.append({"token": args.token, "args": dict(args.args), "provider": args.provider})
            if args.token == TOKEN:
                return {"name": args.args["name"], "sha256Digest": fake_digest(args.args["name"])}
            return original(self, args)

        RecordingMocks.call = call  # type: ignore[method-assign]
        try:
            out[stack] = (run_program(config(stack)).resources, calls)
        finally:
            RecordingMocks.call = original  # type: ignore[method-assign]
    return out


def deploy_rows():
    return [r for r in load_image_digests().values() if r.at_deploy]


def test_each_image_resolved_at_deploy_is_looked_up_once_per_stack_and_every_one_by_some_example(runs):
    looked_up: set[str] = set()
    for stack, (_, calls) in runs.items():
        names = [c["args"]["name"] for c in calls if c["token"] == TOKEN]
        assert len(names) == len(set(names)), f"{stack}: an image was looked up twice: {sorted(names)}"
        assert set(names) <= {r.image for r in deploy_rows()}, stack
        looked_up |= set(names)
    assert looked_up == {r.image for r in deploy_rows()}


def test_the_lookups_go_through_a_provider_that_needs_no_docker_daemon(runs):
    resources, calls = runs["eks-p6e-gb200"]
    providers = {r.name: r for r in resources if r.type == "pulumi:providers:docker"}
    assert set(providers) == {"image-digests", "image-digests-ecr-602401143452-us-west-2"}
    for p in providers.values():
        assert plain(p.inputs)["disableDockerDaemonCheck"] in (True, "true")
    ecr = plain(providers["image-digests-ecr-602401143452-us-west-2"].inputs)["registryAuth"]
    ecr = json.loads(ecr) if isinstance(ecr, str) else ecr
    assert [a["address"] for a in ecr] == ["602401143452.dkr.ecr.us-west-2.amazonaws.com"]
    assert [c["args"] for c in calls if c["token"] == ECR_TOKEN] == [
        {"registryId": "602401143452", "region": "us-west-2"}
    ]
    efa = [c for c in calls if c["token"] == TOKEN and "aws-efa-k8s-device-plugin" in c["args"]["name"]]
    assert efa and all(c["provider"].split("::")[-1].startswith("image-digests-ecr-") for c in efa)
    _, gke_calls = runs["gke-kueue"]
    assert not [c for c in gke_calls if c["token"] == ECR_TOKEN], "a GKE stack must not need AWS credentials"


def _all_images(resources) -> set[str]:
    """Every container image of the program's objects, host-level or not (a listed image is pinned wherever it runs,
    e.g. the Trainer runtimes' default training image on pools without a fabric)."""
    images = set()
    for r in resources:
        props = plain(r.inputs)
        if r.type.startswith("kubernetes:") and isinstance(props.get("spec"), dict):
            kind = r.type.rsplit(":", 1)[-1]
            images |= {
                c.get("image")
                for _, spec in pod_specs({"kind": kind, "spec": props["spec"]})
                for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
            }
    return images


def _host_images(resources) -> set[str]:
    """Images of host-level and secret-holding containers (the pack's view: objects, and charts' values)."""
    images = set()
    for r in resources:
        props = plain(r.inputs)
        images |= {s.container.image for s in seen_host_containers(r.type, props)}
        images |= {s.container.image for s in seen_secret_containers(r.type, props)}
        if r.type.startswith("kubernetes:") and isinstance(props.get("spec"), dict):
            kind = r.type.rsplit(":", 1)[-1]
            images |= {
                c.image for _, spec in pod_specs({"kind": kind, "spec": props["spec"]}) for c in host_containers(spec)
            }
    return images


@pytest.mark.parametrize("stack", STACKS)
def test_the_answer_lands_in_every_host_level_and_secret_holding_container_and_nothing_is_on_a_tag(stack, runs):
    resources, calls = runs[stack]
    answered = {c["args"]["name"] for c in calls if c["token"] == TOKEN}
    images = _host_images(resources)
    everywhere = images | _all_images(resources)
    assert answered
    for image in answered:
        digest = fake_digest(image)
        repository = image.rpartition(":")[0]
        assert {f"{image}@{digest}", f"{repository}@{digest}"} & everywhere, f"{stack}: {image} not pinned"
    assert not [i for i in images if "@" not in i], f"{stack}: host-level or secret-holding images on a tag"
    assert not [i for i in images if i.endswith(DEPLOY_DIGEST)], f"{stack}: the offline stand-in leaked"


def test_the_admission_policy_names_the_pinned_sidecar_and_the_ready_gate_keeps_the_tag(runs):
    """Sidecar capabilities are admitted for exactly the pinned RxDM image. The installer's ready marker and the gate
    that waits for it both name the plugin's tag (the installer itself runs pinned): a job's runtime printed offline
    by ``preview job-objects`` has to match the marker too."""
    resources, _ = runs["gke-h100-512"]
    rxdm = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.20"
    plugin = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.14"
    policies = json.dumps([plain(r.inputs) for r in resources if r.type.endswith(":ValidatingAdmissionPolicy")])
    assert f"'{rxdm}@{fake_digest(rxdm)}'" in policies and f"'{rxdm}'" not in policies
    installer = json.dumps([plain(r.inputs) for r in resources if r.name == "fabric-nccl-tcpxo-installer"])
    slurm = json.dumps([plain(r.inputs) for r in resources if r.name == "slurm-slurm"])
    assert f"echo '{plugin}' >" in installer and f"= '{plugin}' ]" in slurm
    assert f'"{plugin}@{fake_digest(plugin)}"' in installer  # the installer container itself: pinned


@pytest.mark.parametrize("stack", ("gke-h100-512", "eks-p6e-gb200"))
def test_every_slurm_key_holder_gets_the_registry_digest(stack, runs):
    """slurmctld (and its reconfigure container), slurmrestd, slurmdbd, the login pods, the Alpine initconf that
    copies slurm.key and the log sidecars run ``{repository, digest}`` (``slurm.format-image`` drops the tag), and
    the Slurm client Jobs ``image:tag@digest``: each with the digest the registry answered for that image."""
    resources, _ = runs[stack]
    values = next(plain(r.inputs)["values"] for r in resources if r.name == "slurm-slurm")
    values = json.loads(values) if isinstance(values, str) else values

    def at(*path: str) -> Any:
        node = values
        for key in path:
            node = node[key]
        return node

    slinky = "ghcr.io/slinkyproject"
    alpine = "docker.io/library/alpine:3.22.2"
    expected = {
        ("controller", "slurmctld", "image"): f"{slinky}/slurmctld:26.05-ubuntu26.04",
        ("controller", "reconfigure", "image"): f"{slinky}/slurmctld:26.05-ubuntu26.04",
        ("restapi", "slurmrestd", "image"): f"{slinky}/slurmrestd:26.05-ubuntu26.04",
        ("accounting", "slurmdbd", "image"): f"{slinky}/slurmdbd:26.05-ubuntu26.04",
        ("loginsetDefaults", "login", "image"): f"{slinky}/login:26.05-ubuntu26.04",
        ("loginsets", "login", "initconf", "image"): alpine,
        ("controller", "logfile", "image"): alpine,
        ("nodesetDefaults", "logfile", "image"): alpine,
    }
    for path, image in expected.items():
        assert at(*path) == {"repository": image.rpartition(":")[0], "digest": fake_digest(image)}, path
    client = f"{slinky}/login:26.05-ubuntu26.04"
    jobs = [
        plain(r.inputs)
        for r in resources
        if r.type == "kubernetes:batch/v1:Job"
        and "slurm" in json.dumps(plain(r.inputs).get("spec", {}).get("template", {}).get("spec", {}))
    ]
    images = {c["image"] for j in jobs for c in j["spec"]["template"]["spec"]["containers"]}
    assert images == {f"{client}@{fake_digest(client)}"}, images


def _release_values(resources, name: str) -> dict[str, Any]:
    values = next(plain(r.inputs)["values"] for r in resources if r.name == name)
    return json.loads(values) if isinstance(values, str) else values


def test_every_cluster_operator_gets_the_registry_digest_in_the_form_its_chart_takes(runs):
    """Kueue, JobSet, LeaderWorkerSet: ``{repository, tag: <tag>@<digest>}``; the Trainer and KEDA, whose charts
    write ``<registry>/<repository>``: the registry apart; Slinky's operator and webhook: ``{repository, digest}``;
    the GPU Operator: ``version: <tag>@<digest>``. Each with the digest the registry answered for that image
    (``test_host_images_rendered`` checks that real Helm renders these into the pods)."""

    def tagged(image: str) -> str:
        return f"{image.rpartition(':')[2]}@{fake_digest(image)}"

    kueue, jobset = "registry.k8s.io/kueue/kueue:v0.19.2", "registry.k8s.io/jobset/jobset:v0.12.0"
    trainer = "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0"
    serving, _ = runs["gke-serving"]
    assert _release_values(serving, "kueue-chart")["controllerManager"]["manager"]["image"] == {
        "repository": "registry.k8s.io/kueue/kueue",
        "tag": tagged(kueue),
    }
    values = _release_values(serving, "kubeflow-trainer")
    assert values["image"] == {
        "registry": "ghcr.io",
        "repository": "kubeflow/trainer/trainer-controller-manager",
        "tag": tagged(trainer),
    }
    assert values["jobset"]["image"] == {"repository": "registry.k8s.io/jobset/jobset", "tag": tagged(jobset)}
    assert _release_values(serving, "serving-lws")["image"]["manager"] == {
        "repository": "registry.k8s.io/lws/lws",
        "tag": tagged("registry.k8s.io/lws/lws:v0.10.0"),
    }
    keda = _release_values(serving, "serving-keda")["image"]
    for key, name in (
        ("keda", "keda"),
        ("metricsApiServer", "keda-metrics-apiserver"),
        ("webhooks", "keda-admission-webhooks"),
    ):
        image = f"ghcr.io/kedacore/{name}:2.20.2"
        assert keda[key] == {"registry": "ghcr.io", "repository": f"kedacore/{name}", "tag": tagged(image)}, key
    slurm, _ = runs["gke-h100-512"]
    values = _release_values(slurm, "slurm-operator")
    for key, name in (("operator", "slurm-operator"), ("webhook", "slurm-operator-webhook")):
        image = f"ghcr.io/slinkyproject/{name}:1.2.1"
        assert values[key]["image"] == {"repository": image.rpartition(":")[0], "digest": fake_digest(image)}, key
    mig, _ = runs["gke-operator-mig"]
    operator = "nvcr.io/nvidia/gpu-operator:v26.7.0"
    assert _release_values(mig, "gpu-runtime-gpu-operator")["operator"] == {
        "repository": "nvcr.io/nvidia",
        "image": "gpu-operator",
        "version": tagged(operator),
    }
