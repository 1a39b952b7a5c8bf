"""security-privileged-images-by-digest against the real render: every example's Helm releases rendered by Helm 3
(and the objects the program creates) give the host-level and secret-holding containers that really run (Slinky's
custom resources as the pods its operator makes of them, ``tests/support/helm/slinky_pods.py``); the rule, which sees
only the releases' values and the program's objects (catalog/data/host-level-images.csv and secret-holding-images.csv
for the charts' defaults), must see each of them and no image the charts do not render; since the rule is mandatory,
every one of them is pinned by digest (cited, or resolved from the registry at deploy: ``DEPLOY_DIGEST`` offline)."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.image_digests import DEPLOY_DIGEST, load_image_digests
from stacks.plan.host_access import (
    HostContainer,
    by_digest,
    host_containers,
    pod_specs,
    secret_holding_containers,
    secret_reading_containers,
    secret_reading_service_accounts,
)
from policies.host_images import cloud_identities, seen_host_containers, seen_secret_containers
from policies.rule import Resource
from policies.rules.security_privileged_images_by_digest import RULE
from tests.support.helm.checks import image_refs, program_objects
from tests.support.helm.examples import rendered
from tests.support.helm.render import plain
from tests.support.helm.slinky_pods import slinky_pod
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS


def _workload_objects(stack: str) -> list[dict[str, Any]]:
    """Every object with a pod template the program creates, named or not (the Slurm client Jobs are auto-named)."""
    out = []
    for x in rendered(stack).rec.resources:
        props = plain(x.inputs)
        if x.type.startswith("kubernetes:") and x.custom and isinstance(props.get("spec"), dict):
            out.append({"kind": x.type.rsplit(":", 1)[-1], "spec": props["spec"]})
    return out


def rendered_pods(stack: str) -> list[dict[str, Any]]:
    """Every pod spec the stack runs: the releases' workloads, the pods Slinky's operator makes of its custom
    resources, and the program's own workloads."""
    r = rendered(stack)
    specs = []
    for release in r.releases.values():
        for obj in release:
            slinky = slinky_pod(obj, release)
            specs += [slinky] if slinky is not None else [s for _, s in pod_specs(obj)]
    return specs + [s for obj in _workload_objects(stack) for _, s in pod_specs(obj)]


def rendered_host_containers(stack: str) -> list[HostContainer]:
    return [c for spec in rendered_pods(stack) for c in host_containers(spec)]


def _with_readers(spec: dict[str, Any], readers: set[str]) -> list[HostContainer]:
    """The pod's containers that hold a Secret: mounted, in the environment, or read through the RBAC of the pod's
    ServiceAccount (one entry per container, every reason)."""
    merged: dict[tuple[str, str], list[str]] = {}
    for c in secret_holding_containers(spec) + secret_reading_containers(spec, readers):
        merged.setdefault((c.container, c.image), []).extend(c.reasons)
    return [HostContainer(name, image, tuple(dict.fromkeys(reasons))) for (name, image), reasons in merged.items()]


def rendered_secret_containers(stack: str) -> list[HostContainer]:
    """Every container of every pod the stack runs that holds a Secret, with nothing exempt: the Slurm daemons and
    Jobs, the databases, and the cluster operators (Kueue, JobSet, the Trainer, LeaderWorkerSet, KEDA, Slinky's
    operator and webhook, the GPU Operator), which mount their webhook serving certificates and most of which read
    Secrets through their RBAC; and every container of a pod that runs as a cloud identity."""
    r = rendered(stack)
    out = []
    for release in r.releases.values():
        readers = secret_reading_service_accounts(release)
        for obj in release:
            slinky = slinky_pod(obj, release)
            for spec in [slinky] if slinky is not None else [s for _, s in pod_specs(obj)]:
                out += _with_readers(spec, readers)
    program = program_objects(r.rec)
    readers = secret_reading_service_accounts(program)
    return (
        out
        + [c for obj in _workload_objects(stack) for _, spec in pod_specs(obj) for c in _with_readers(spec, readers)]
        + identity_containers(stack)
    )


def identity_containers(stack: str) -> list[HostContainer]:
    """The containers of the program's pods that run as a cloud identity (Workload Identity, Pod Identity)."""
    ids = identities(stack)
    out = []
    for x in rendered(stack).rec.resources:
        props = plain(x.inputs)
        if not (x.type.startswith("kubernetes:") and x.custom and isinstance(props.get("spec"), dict)):
            continue
        ns = props.get("metadata", {}).get("namespace", "default")
        for _, spec in pod_specs({"kind": x.type.rsplit(":", 1)[-1], "spec": props["spec"]}):
            identity = ids.get((ns, spec.get("serviceAccountName") or "default"))
            out += secret_holding_containers(spec, identity) if identity else []
    return out


def identities(stack: str) -> dict[tuple[str, str], str]:
    return cloud_identities((r.type, r.props) for r in resources(stack))


def operand_images(stack: str) -> set[str]:
    """Images of the GPU Operator's operands: the operator makes their pods from the rendered ClusterPolicy."""
    return {ref for o in rendered(stack).objects if o["kind"] == "ClusterPolicy" for _, ref in image_refs(o)}


def runtime_images(stack: str) -> set[str]:
    """Images of the Trainer runtimes the program creates (their default training image is pinned by digest; it
    runs host-level only on TCPX/TCPXO pools, which no example leaves on the default)."""
    return {
        c.get("image")
        for obj in program_objects(rendered(stack).rec)
        if obj["kind"] == "ClusterTrainingRuntime"
        for _, spec in pod_specs(obj)
        for c in spec.get("containers") or []
    }


def resources(stack: str) -> list[Resource]:
    return [Resource(x.type, x.name, x.urn, plain(x.inputs)) for x in rendered(stack).rec.resources]


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_the_rule_sees_every_host_level_container_the_example_renders(stack):
    really = {c.image for c in rendered_host_containers(stack)}
    seen = {s.container.image for r in resources(stack) for s in seen_host_containers(r.type, r.props)}
    assert really <= seen, f"{stack}: rendered host-level images the rule does not see: {sorted(really - seen)}"
    phantom = seen - really - operand_images(stack)
    assert not phantom, f"{stack}: the rule reads images no chart of the stack renders: {sorted(phantom)}"


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_rendered_host_level_image_is_pinned_by_digest_and_the_mandatory_rule_passes(stack):
    containers = rendered_host_containers(stack)
    unpinned = [c for c in containers if not c.by_digest]
    assert not unpinned, f"{stack}: host-level containers pinned by tag only: {unpinned}"
    findings = [f for r in resources(stack) for f in RULE.evaluate(r)[0]]
    assert not findings, f"{stack}: {[f.message for f in findings]}"
    assert all(c.by_digest for c in containers if c.image.startswith("docker.io/library/ubuntu")), (
        f"{stack}: an ubuntu tag runs in the host's namespaces"
    )


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_the_rule_sees_every_secret_holding_container_the_example_renders(stack):
    really = {c.image for c in rendered_secret_containers(stack)}
    seen = {
        s.container.image for r in resources(stack) for s in seen_secret_containers(r.type, r.props, identities(stack))
    }
    assert really <= seen, f"{stack}: rendered secret-holding images the rule does not see: {sorted(really - seen)}"
    assert not seen - really, f"{stack}: the rule reads images no chart of the stack renders: {sorted(seen - really)}"


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_rendered_container_that_holds_a_secret_runs_a_digest(stack):
    """Walks every pod the stack runs (Slinky's Controller, RestApi, Accounting, LoginSet and NodeSet pods, the
    Slurm client Jobs, MariaDB and its backup): a container holding slurm.key, the JWT key or a password on a tag
    hands the key to whoever moves the tag."""
    tagged = [c for c in rendered_secret_containers(stack) if not c.by_digest]
    assert not tagged, f"{stack}: secret-holding containers on a tag: {tagged}"


def test_the_slurm_examples_hold_their_keys_in_containers_pinned_by_digest():
    """The walk above ran on the Slurm examples' key holders: slurmctld, slurmrestd, slurmdbd, login, the login
    initconf copying slurm.key, slurmd and the client Jobs, and Slinky's operator (which reads the keys through its
    RBAC) and webhook, each by digest."""
    for stack in ("gke-h100-512", "eks-p6e-gb200"):
        held = {c.container: c for c in rendered_secret_containers(stack)}
        assert {
            "slurmctld",
            "slurmrestd",
            "slurmdbd",
            "login",
            "initconf",
            "slurmd",
            "sacctmgr",
            "scontrol",
            "mariadb",
            "dump",
            "slurm-operator",
            "webhook",
        } <= set(held), f"{stack}: {sorted(held)}"
        assert all(c.by_digest for c in held.values()), stack
        assert any("slurm-auth-slurm" in r for r in held["initconf"].reasons)
        assert held["sacctmgr"].image.startswith("ghcr.io/slinkyproject/login:26.05-ubuntu26.04@sha256:")
        assert any(r.startswith("reads Secrets as ServiceAccount") for r in held["slurm-operator"].reasons)
        assert held["slurm-operator"].image == f"ghcr.io/slinkyproject/slurm-operator@{DEPLOY_DIGEST}"


CLUSTER_OPERATORS = {
    # stack -> (container, image as it runs offline, the Secret its pod mounts or None)
    "gke-serving": {
        ("manager", f"registry.k8s.io/kueue/kueue:v0.19.2@{DEPLOY_DIGEST}", "kueue-webhook-server-cert"),
        ("controller", f"registry.k8s.io/jobset/jobset:v0.12.0@{DEPLOY_DIGEST}", "jobset-webhook-server-cert"),
        (
            "manager",
            f"ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0@{DEPLOY_DIGEST}",
            "kubeflow-trainer-webhook-cert",
        ),
        ("manager", f"registry.k8s.io/lws/lws:v0.10.0@{DEPLOY_DIGEST}", "lws-webhook-server-cert"),
        ("keda-operator", f"ghcr.io/kedacore/keda:2.20.2@{DEPLOY_DIGEST}", "kedaorg-certs"),
        (
            "keda-operator-metrics-apiserver",
            f"ghcr.io/kedacore/keda-metrics-apiserver:2.20.2@{DEPLOY_DIGEST}",
            "kedaorg-certs",
        ),
        (
            "keda-admission-webhooks",
            f"ghcr.io/kedacore/keda-admission-webhooks:2.20.2@{DEPLOY_DIGEST}",
            "kedaorg-certs",
        ),
    },
    "gke-h100-512": {
        ("webhook", f"ghcr.io/slinkyproject/slurm-operator-webhook@{DEPLOY_DIGEST}", "slurm-operator-webhook-ca"),
        ("slurm-operator", f"ghcr.io/slinkyproject/slurm-operator@{DEPLOY_DIGEST}", None),
    },
    "gke-operator-mig": {
        ("gpu-operator", f"nvcr.io/nvidia/gpu-operator:v26.7.0@{DEPLOY_DIGEST}", None),
    },
}


@pytest.mark.parametrize("stack", sorted(CLUSTER_OPERATORS))
def test_the_cluster_operators_that_hold_keys_run_the_digest_resolved_at_deploy(stack):
    """Kueue, JobSet, the Trainer, LeaderWorkerSet, KEDA, Slinky's operator and webhook and the GPU Operator mount
    their webhook serving certificates or read Secrets through their RBAC (a moved tag there is the cluster): real
    Helm renders each of them with the digest the registry returns at deploy."""
    held = {(c.container, c.image): c for c in rendered_secret_containers(stack)}
    for container, image, secret in CLUSTER_OPERATORS[stack]:
        assert (container, image) in held, f"{stack}: {container} does not run {image}: {sorted(held)}"
        if secret is not None:
            assert f"mounts Secret {secret}" in held[(container, image)].reasons, held[(container, image)]


def test_the_examples_pin_by_cited_digests_and_by_deploy_time_resolution():
    """The checks above ran on something: cited digests and deploy-time resolutions both occur, every catalog row
    resolved at deploy appears in some example exactly as ``<image>@DEPLOY_DIGEST`` (the Slinky chart drops the tag),
    and no example carries a made-up digest for one."""
    everything = [c for s in EXAMPLE_STACKS for c in rendered_host_containers(s)]
    assert {"privileged", "hostPID"} <= {reason for c in everything for reason in c.reasons}
    everything += [c for s in EXAMPLE_STACKS for c in rendered_secret_containers(s)]
    images = {c.image for c in everything} | {i for s in EXAMPLE_STACKS for i in operand_images(s)}
    images |= {i for s in EXAMPLE_STACKS for i in runtime_images(s)}  # the default training image
    deploy = [r for r in load_image_digests().values() if r.at_deploy]
    for row in deploy:
        forms = {f"{row.image}@{DEPLOY_DIGEST}", f"{row.repository}@{DEPLOY_DIGEST}"}
        assert forms & images, f"{row.image}: resolved at deploy but no example runs it"
        assert not [i for i in images if i.startswith(row.image + "@sha256:") and not i.endswith(DEPLOY_DIGEST)]
    cited = [r for r in load_image_digests().values() if not r.at_deploy]
    assert any(f"{r.image}@{r.digest}" in images for r in cited)


def test_the_gpu_operators_host_level_operands_are_pinned():
    """The operator makes its operands' pods from the ClusterPolicy: each host-level operand the release enables
    carries a digest there (device plugin, GFD, toolkit, DCGM exporter, MIG manager: cited; validator: at deploy).
    Operands the release leaves off (driver and its manager, the sandbox operands) keep the chart's tags: they never
    run."""
    operands = operand_images("gke-operator-mig")
    host_level = (
        "nvcr.io/nvidia/k8s-device-plugin:",
        "nvcr.io/nvidia/k8s/container-toolkit:",
        "nvcr.io/nvidia/k8s/dcgm-exporter:",
        "nvcr.io/nvidia/cloud-native/k8s-mig-manager:",
        "nvcr.io/nvidia/gpu-operator:",
    )
    running = {i for i in operands if i.startswith(host_level)}
    assert {i.partition(":")[0] for i in running} == {p.rstrip(":") for p in host_level}
    assert all(by_digest(i) for i in running), sorted(i for i in running if not by_digest(i))
    assert (
        "nvcr.io/nvidia/k8s-device-plugin:v0.20.0@sha256:"
        "a61ba9fd8efb82f3a79f877f7580e02c1e8e7593f62473644bc9c79e315c3312" in running
    )
    assert f"nvcr.io/nvidia/gpu-operator:v26.7.0@{DEPLOY_DIGEST}" in running


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving", "gke-h100-512", "eks-p6e-gb200"])
def test_containers_running_as_a_cloud_identity_or_reading_a_secrets_output_run_a_digest(stack):
    """vLLM reads the model bucket as its cloud identity, the Slurm backup's uploader reads the dump the database
    password made and writes the backup bucket: both count as secret-holding, and run by digest."""
    held = {c.container: c for c in rendered_secret_containers(stack)}
    wanted = {"vllm"} if "serving" in stack else {"upload"}
    assert wanted <= set(held), f"{stack}: {sorted(held)}"
    for name in wanted:
        assert held[name].by_digest, held[name]
        assert any(r.startswith(("runs as cloud identity", "shares emptyDir")) for r in held[name].reasons), held[name]
