"""What the training process of a rendered workload sees: the view the fabric contract judges.

A pure function of rendered objects (never of the code that rendered them), so the tests, the preview and the policy
pack judge the same thing (``stacks/plan/fabric_contract.py``):
- a Kubeflow ``ClusterTrainingRuntime``: the process is the training container; it sees the container's env, image,
  mounts and resources, the pod's volumes, sidecars, multi-network interfaces or DRA claim;
- a Slinky NodeSet (the ``slurm`` chart's ``nodesets.<pool>`` values + ``controller.extraConf``): a task runs in the
  slurmd container (its mounts, resources, interfaces, /dev/shm, image) but with the **submitter's** environment,
  never slurmd's (SchedMD/slurm ``src/slurmd/slurmstepd/task.c``), plus what the ``TaskProlog`` named in slurm.conf
  exports: the env file the NodeSet mounts next to it (``stacks/plan/slurm_task_env.py``). The submitter's own env is
  taken as empty (a login pod has no NCCL variable).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from catalog.fabric_images import BUILD_ANNOTATION, CHECK_CONTAINER
from stacks.plan.slurm_task_env import CONFIG_MAP, ENV_NAME, TASK_DIR, parse_env_file
from stacks.spec.stack import POOL_LABEL_KEY

SLINKY_SLURMD_IMAGE = "ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04"
"""The slurm chart's default ``nodesets.*.slurmd.image`` (slurm 1.2.1 values.yaml: repository and tag)."""
INTERFACES_ANNOTATION = "networking.gke.io/interfaces"
NON_GPU_NETWORKS = ("default", "gvnic-")
"""Interfaces that carry no GPU traffic: the primary network and RDMA's extra gVNIC (``gvnic-1``)."""


@dataclass(frozen=True)
class ProcessView:
    """What the training process of one workload sees."""

    workload: str
    """``ClusterTrainingRuntime torch-h100`` or ``Slinky NodeSet h100``."""
    pool: str | None
    env: dict[str, str]
    env_origin: str
    image: str
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    mounts: dict[str, str] = field(default_factory=dict)
    """mountPath -> volume name."""
    volumes: dict[str, dict] = field(default_factory=dict)
    interfaces: tuple[tuple[str, str], ...] = ()
    """(interface, network) of every multi-network interface but the primary one."""
    claimed_nics: int = 0
    """NICs the pod claims through DRA (GKE managed DRANET)."""
    sidecars: tuple[str, ...] = ()
    gated_on: tuple[str, ...] = ()
    """Host directories an init container mounts that runs to completion before every sidecar and the job."""
    build: str | None = None
    """The recipe the pod says its job image was built from (annotation ``gpu-cluster/image-build``)."""
    checked_images: tuple[str, ...] = ()
    """Images the ``fabric-image-check`` init container verified before anything else starts."""

    @property
    def ld_path(self) -> list[str]:
        return [d for d in self.env.get("LD_LIBRARY_PATH", "").split(":") if d]

    @property
    def gpu_nics(self) -> int:
        nets = [n for _, n in self.interfaces if not n.startswith(NON_GPU_NETWORKS)]
        return len(nets) + self.claimed_nics


def _plain_env(container: Mapping[str, Any]) -> dict[str, str]:
    return {e["name"]: str(e["value"]) for e in container.get("env") or [] if isinstance(e, dict) and "value" in e}


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in (value or {}).items()} if isinstance(value, dict) else {}


def _interfaces(annotations: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    try:
        nics = json.loads(str(annotations.get(INTERFACES_ANNOTATION) or "[]"))
    except ValueError:
        return ()
    return tuple(
        (str(n.get("interfaceName")), str(n.get("network")))
        for n in nics
        if isinstance(n, dict) and n.get("network") != "default"
    )


def _claimed(pod: Mapping[str, Any], claims: Mapping[str, int]) -> int:
    return sum(
        claims.get(str(c.get("resourceClaimTemplateName")), 0)
        for c in pod.get("resourceClaims") or []
        if isinstance(c, dict)
    )


def _sidecars(pod: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(
        str(c.get("name"))
        for c in pod.get("initContainers") or []
        if isinstance(c, dict) and c.get("restartPolicy") == "Always"
    )


def _gated_on(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """hostPath directories mounted by the init containers that run before the first sidecar."""
    volumes = {
        str(v.get("name")): str((v.get("hostPath") or {}).get("path") or "")
        for v in pod.get("volumes") or []
        if isinstance(v, dict)
    }
    out: list[str] = []
    for c in pod.get("initContainers") or []:
        if not isinstance(c, dict) or c.get("restartPolicy") == "Always":
            break
        out += [volumes[str(m.get("name"))] for m in c.get("volumeMounts") or [] if volumes.get(str(m.get("name")))]
    return tuple(out)


def _checked_images(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """The image of a ``fabric-image-check`` init container that runs first (before every other container)."""
    first = next(iter(pod.get("initContainers") or []), None)
    return (str(first.get("image")),) if isinstance(first, dict) and first.get("name") == CHECK_CONTAINER else ()


def _view(
    workload: str,
    pool: str | None,
    env: dict[str, str],
    origin: str,
    image: str,
    container: Mapping[str, Any],
    pod: Mapping[str, Any],
    annotations: Mapping[str, Any],
    claims: Mapping[str, int],
) -> ProcessView:
    res = container.get("resources") or {}
    return ProcessView(
        workload=workload,
        pool=pool,
        env=env,
        env_origin=origin,
        image=image,
        requests=_str_map(res.get("requests")),
        limits=_str_map(res.get("limits")),
        mounts={
            str(m.get("mountPath")): str(m.get("name"))
            for m in container.get("volumeMounts") or []
            if isinstance(m, dict)
        },
        volumes={str(v.get("name")): v for v in pod.get("volumes") or [] if isinstance(v, dict)},
        interfaces=_interfaces(annotations),
        claimed_nics=_claimed(pod, claims),
        sidecars=_sidecars(pod),
        gated_on=_gated_on(pod),
        build=str(annotations[BUILD_ANNOTATION]) if BUILD_ANNOTATION in annotations else None,
        checked_images=_checked_images(pod),
    )


def runtime_views(runtime: Mapping[str, Any], claims: Mapping[str, int] = {}) -> list[ProcessView]:
    """One view per replicated job of a ClusterTrainingRuntime (its first container is the training one)."""
    name = (runtime.get("metadata") or {}).get("name")
    out = []
    for job in ((runtime.get("spec") or {}).get("template") or {}).get("spec", {}).get("replicatedJobs") or []:
        template = (((job.get("template") or {}).get("spec") or {}).get("template")) or {}
        pod = template.get("spec") or {}
        containers = pod.get("containers") or [{}]
        main = containers[0]
        out.append(
            _view(
                f"ClusterTrainingRuntime {name}",
                (pod.get("nodeSelector") or {}).get(POOL_LABEL_KEY),
                _plain_env(main),
                "the container's env",
                str(main.get("image") or ""),
                main,
                pod,
                (template.get("metadata") or {}).get("annotations") or {},
                claims,
            )
        )
    return out


def _prolog(extra_conf: str) -> str | None:
    m = re.search(r"^\s*TaskProlog\s*=\s*(\S+)", extra_conf or "", re.MULTILINE | re.IGNORECASE)
    return m.group(1) if m else None


def _prolog_env(
    prolog: str | None, slurmd: Mapping[str, Any], pod: Mapping[str, Any], task_env: Mapping[str, str] | None
) -> tuple[dict[str, str], str]:
    """What the TaskProlog exports on this NodeSet: the env file mounted beside it, from the ConfigMap's data."""
    if prolog is None:
        return {}, "the submitter's env only (no TaskProlog in slurm.conf; slurmd's env is not inherited)"
    folder = prolog.rsplit("/", 1)[0]
    mount = next((m for m in slurmd.get("volumeMounts") or [] if m.get("mountPath") == folder == TASK_DIR), None)
    volume = next((v for v in pod.get("volumes") or [] if mount and v.get("name") == mount.get("name")), None)
    cm = (volume or {}).get("configMap") or {}
    key = next((i.get("key") for i in cm.get("items") or [] if i.get("path") == ENV_NAME), None)
    if cm.get("name") != CONFIG_MAP or key is None or task_env is None or key not in task_env:
        return {}, f"the submitter's env only (TaskProlog {prolog} has no fabric env file on this NodeSet)"
    env = parse_env_file(task_env[key])
    return env, f"TaskProlog {prolog} exports (ConfigMap {CONFIG_MAP} key {key}); slurmd's env is not inherited"


def _slurmd_image(slurmd: Mapping[str, Any]) -> str:
    """As the chart formats it (``slurm.format-image``): a string, ``repository@digest`` or ``repository:tag``."""
    image = slurmd.get("image")
    if isinstance(image, str):
        return image
    if isinstance(image, dict) and image.get("repository"):
        if image.get("digest"):
            return f"{image['repository']}@{image['digest']}"
        return f"{image['repository']}:{image.get('tag', '')}".rstrip(":")
    return SLINKY_SLURMD_IMAGE


def nodeset_views(
    values: Mapping[str, Any], task_env: Mapping[str, str] | None = None, claims: Mapping[str, int] = {}
) -> list[ProcessView]:
    """One view per NodeSet of the slurm chart's values; ``task_env``: the ``slurm-task-env`` ConfigMap's data."""
    prolog = _prolog(str((values.get("controller") or {}).get("extraConf") or ""))
    out = []
    for name, ns in (values.get("nodesets") or {}).items():
        if not isinstance(ns, dict):
            continue
        slurmd, pod = ns.get("slurmd") or {}, ns.get("podSpec") or {}
        env, origin = _prolog_env(prolog, slurmd, pod, task_env)
        out.append(
            _view(
                f"Slinky NodeSet {name}",
                (pod.get("nodeSelector") or {}).get(POOL_LABEL_KEY),
                env,
                origin,
                _slurmd_image(slurmd),
                slurmd,
                pod,
                (ns.get("metadata") or {}).get("annotations") or {},
                claims,
            )
        )
    return out


def claim_counts(templates: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """ResourceClaimTemplate name -> devices its requests claim (ExactCount)."""
    out: dict[str, int] = {}
    for t in templates:
        name = str((t.get("metadata") or {}).get("name"))
        reqs = (((t.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests") or []
        out[name] = sum(int((r.get("exactly") or {}).get("count") or 0) for r in reqs if isinstance(r, dict))
    return out


RUNTIME_TYPE = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
CONFIG_MAP_TYPE = "kubernetes:core/v1:ConfigMap"
CLAIM_TEMPLATE_TYPE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"


def workload_views(objects: Iterable[tuple[str, Mapping[str, Any]]]) -> list[ProcessView]:
    """Every training runtime and Slinky NodeSet among recorded resources ``(type, inputs)``."""
    objects = list(objects)
    claims = claim_counts(props for t, props in objects if t == CLAIM_TEMPLATE_TYPE)
    task_env = next(
        (
            dict(props.get("data") or {})
            for t, props in objects
            if t == CONFIG_MAP_TYPE and (props.get("metadata") or {}).get("name") == CONFIG_MAP
        ),
        None,
    )
    views: list[ProcessView] = []
    for t, props in objects:
        if t == RUNTIME_TYPE:
            views += runtime_views(props, claims)
        elif (
            t == RELEASE_TYPE
            and isinstance((props.get("values") or {}).get("nodesets"), dict)
            and str(props.get("chart", "")).rstrip("/").endswith("/slurm")
        ):
            views += nodeset_views(props["values"], task_env, claims)
    return views
