"""The host-level and secret-holding containers a resource runs, as the policy pack can see them: pod templates of
the Kubernetes objects the program creates, and for Helm releases the images the chart runs host-level or hands a key
(``catalog/host_images.py``) with the release's values over the chart's defaults, plus the pod specs the values carry
(Slinky NodeSets)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from catalog.host_images import ChartHostImage, chart_host_images, chart_secret_images
from stacks.plan.host_access import HostContainer, host_containers, pod_specs, secret_holding_containers
from policies.resources import HELM_RELEASE
from policies.values import UNKNOWN, as_dict

WORKLOAD_TYPES = (
    "kubernetes:core/v1:Pod",
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:DaemonSet",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:apps/v1:ReplicaSet",
    "kubernetes:batch/v1:Job",
    "kubernetes:batch/v1:CronJob",
    "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime",
    "kubernetes:trainer.kubeflow.org/v1alpha1:TrainingRuntime",
    "kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob",
    "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet",
    "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
)
SERVICE_ACCOUNTS = ("kubernetes:core/v1:ServiceAccount", "kubernetes:v1:ServiceAccount")
"""The SDK's type, and the one ``custom_resource`` registers an object of apiVersion v1 as."""
POD_IDENTITY = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
WORKLOAD_IDENTITY_ANNOTATION = "iam.gke.io/gcp-service-account"
SLURM_CHART = "slurm"
SLURMD_PRIVILEGED = {"privileged": True}
"""Slinky's operator runs slurmd privileged whatever the values say (the NodeSet has no securityContext for it)."""


@dataclass(frozen=True)
class Seen:
    where: str
    """Where the image is set: ``spec.template.spec`` of an object, or a values path of a release."""
    container: HostContainer


def image_text(value: Any) -> str | None:
    """An image value as a reference: a string, ``[registry/]repository``/``tag``/``digest`` or ``repository``/
    ``image``/``version`` (a digest as the version gives ``repo@sha256:…``); None when unset or not known until
    deploy."""
    if isinstance(value, str):
        return value or None
    value = as_dict(value)
    repo = value.get("repository")
    if not isinstance(repo, str) or not repo or UNKNOWN in value.values():
        return None
    if isinstance(value.get("image"), str):
        repo = f"{repo}/{value['image']}"
    if isinstance(value.get("registry"), str) and value["registry"]:  # the Trainer's and KEDA's image values
        repo = f"{value['registry']}/{repo}"
    tag = value.get("tag", value.get("version"))
    ref = repo
    if isinstance(tag, str) and tag:
        ref += f"@{tag}" if tag.startswith("sha256:") else f":{tag}"
    if isinstance(value.get("digest"), str) and value["digest"]:
        ref += f"@{value['digest']}"
    return ref


def _dig(values: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(values, dict):
            return None
        values = values.get(key)
    return values


def _condition_holds(values: dict, row: ChartHostImage) -> bool:
    for path in row.condition:  # Helm: the first condition path set in the values decides
        value = _dig(values, path)
        if isinstance(value, bool):
            return value
    return row.condition_default


def _expanded(values: dict, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(concrete path, value) for a path whose ``*`` matches every key of a map."""
    if "*" not in path:
        yield path, _dig(values, path)
        return
    star = path.index("*")
    for key, _ in as_dict(_dig(values, path[:star])).items():
        yield from ((p, v) for p, v in _expanded(values, (*path[:star], str(key), *path[star + 1 :])))


def release_containers(chart: str, version: str, values: dict) -> list[Seen]:
    out = []
    for row in chart_host_images(chart, version):
        if not _condition_holds(values, row):
            continue
        for path, value in _expanded(values, row.values_path):
            image = image_text(value) or image_text(_dig(values, row.defaults_path)) or row.default_image
            if chart.rsplit("/", 1)[-1] == SLURM_CHART:
                out += _nodeset(values, path, image)
            else:
                out.append(Seen(".".join(path), HostContainer(row.component, image, (row.host_access,))))
    return out


def _nodeset(values: dict, image_path: tuple[str, ...], slurmd_image: str) -> list[Seen]:
    """A Slinky NodeSet as the pod it makes: its ``podSpec`` (sidecars, volumes) plus slurmd, privileged."""
    nodeset = image_path[:-2]  # nodesets.<name>
    entry = as_dict(_dig(values, nodeset))
    if entry.get("enabled") is False:
        return []
    spec = dict(as_dict(entry.get("podSpec")))
    slurmd = {
        "name": "slurmd",
        "image": slurmd_image,
        "securityContext": SLURMD_PRIVILEGED,
        "volumeMounts": as_dict(entry.get("slurmd")).get("volumeMounts") or [],
    }
    spec["containers"] = [*(spec.get("containers") or []), slurmd]
    where = ".".join(nodeset)
    return [
        Seen(f"{where}.slurmd.image" if c.container == "slurmd" else f"{where}.podSpec", c)
        for c in host_containers(spec)
    ]


def release_secret_containers(chart: str, version: str, values: dict) -> list[Seen]:
    """The containers a release's operator hands a key (``catalog/data/secret-holding-images.csv``); a map entry
    (``loginsets.<name>``) switched off runs nothing."""
    out = []
    for row in chart_secret_images(chart, version):
        if not _condition_holds(values, row):
            continue
        for path, value in _expanded(values, row.values_path):
            if "*" in row.values_path:
                entry = as_dict(_dig(values, path[: row.values_path.index("*") + 1]))
                if entry.get("enabled", _dig(values, (*row.defaults_path[:1], "enabled"))) is False:
                    continue
            image = image_text(value) or image_text(_dig(values, row.defaults_path)) or row.default_image
            out.append(Seen(".".join(path), HostContainer(row.component, image, (row.host_access,))))
    return out


def cloud_identities(resources: Iterable[tuple[str, dict]]) -> dict[tuple[str, str], str]:
    """(namespace, ServiceAccount) -> the cloud identity its pods run as: a GKE Workload Identity annotation, or an
    EKS Pod Identity association; from (type, props) of a stack's resources."""
    out: dict[tuple[str, str], str] = {}
    for type_, props in resources:
        meta = as_dict(props.get("metadata"))
        gsa = as_dict(meta.get("annotations")).get(WORKLOAD_IDENTITY_ANNOTATION)
        if type_ in SERVICE_ACCOUNTS and isinstance(gsa, str):
            out[(str(meta.get("namespace", "default")), str(meta.get("name")))] = gsa
        if type_ == POD_IDENTITY:
            role = props.get("roleArn")
            out[(str(props.get("namespace")), str(props.get("serviceAccount")))] = (
                role if isinstance(role, str) else "an EKS Pod Identity role"
            )
    return out


def seen_secret_containers(type_: str, props: dict, identities: dict[tuple[str, str], str] | None = None) -> list[Seen]:
    """Every container a resource runs that holds a Secret (mounted, in its env, or handed by a chart's operator),
    or, in a pod whose ServiceAccount is in ``identities`` (``cloud_identities``), a cloud identity."""
    if type_ == HELM_RELEASE:
        release = _chart_version(props)
        return release_secret_containers(*release, as_dict(props.get("values"))) if release else []
    namespace = str(as_dict(props.get("metadata")).get("namespace", "default"))
    return [
        Seen(path, c)
        for path, spec in _workload_pod_specs(type_, props)
        for c in secret_holding_containers(
            spec, (identities or {}).get((namespace, str(spec.get("serviceAccountName") or "default")))
        )
    ]


def seen_host_containers(type_: str, props: dict) -> list[Seen]:
    """Every host-level container a resource runs, as far as its inputs say."""
    if type_ == HELM_RELEASE:
        release = _chart_version(props)
        return release_containers(*release, as_dict(props.get("values"))) if release else []
    return [Seen(path, c) for path, spec in _workload_pod_specs(type_, props) for c in host_containers(spec)]


def _chart_version(props: dict) -> tuple[str, str] | None:
    """A Helm release's chart and version, or None when the inputs do not say (not known at preview)."""
    chart, version = props.get("chart"), props.get("version")
    return (chart, version) if isinstance(chart, str) and isinstance(version, str) else None


def _workload_pod_specs(type_: str, props: dict) -> list[tuple[str, dict]]:
    """The pod specs (with their paths) of a Kubernetes workload resource; none for any other type."""
    if type_ not in WORKLOAD_TYPES:
        return []
    return pod_specs({"kind": type_.rsplit(":", 1)[-1], "spec": as_dict(props.get("spec"))})
