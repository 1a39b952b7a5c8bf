"""Which containers of a pod reach the node (host-level containers), and whether their images are pinned by digest.
Pure: reads pod specs as plain dicts, the way the API server receives them.

A host-level container is one a tampered image turns into root on the node: it runs privileged, adds a capability
beyond Pod Security baseline, writes a host path, or shares the node's PID, network or IPC namespace. Such a container
must run exactly the bytes that were reviewed, so its image is pinned by digest (a tag can be moved to other bytes by
whoever controls the registry or the tag). Read-only host paths (the NCCL plugin libraries a job loads) do not make a
container host-level: it can read, not change, the node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from catalog.image_digests import DEPLOY_DIGEST, resolved_at_deploy
from stacks.plan.images import parse_image

BASELINE_CAPABILITIES = (
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
)
"""Capabilities Pod Security baseline lets any container add."""
HOST_NAMESPACES = ("hostPID", "hostNetwork", "hostIPC")
WORKLOAD_KINDS = ("Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "CronJob")
"""Kinds whose pod template sits at a known place (besides the custom resources in ``pod_specs``: Trainer runtimes,
TrainJob runtime patches, JobSets and LeaderWorkerSets)."""


@dataclass(frozen=True)
class HostContainer:
    container: str
    image: str
    reasons: tuple[str, ...]
    """Why it reaches the node: ``privileged``, ``hostPID``, ``adds NET_ADMIN``, ``writes host path /sys``."""

    @property
    def by_digest(self) -> bool:
        return by_digest(self.image)


def by_digest(image: str) -> bool:
    """The reference names a sha256 digest (``repo@sha256:…`` or ``repo:tag@sha256:…``), or stands for the digest
    the registry returns at deploy for an image ``catalog/data/image-digests.csv`` resolves then (offline only)."""
    ref = parse_image(image)
    if ref is None or ref.digest is None:
        return False
    return ref.digest != DEPLOY_DIGEST or resolved_at_deploy(image)


def _containers(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                yield c


def host_containers(spec: dict[str, Any]) -> list[HostContainer]:
    """The host-level containers of a pod spec, each with why."""
    pod_reasons = tuple(k for k in HOST_NAMESPACES if spec.get(k) is True)
    host_volumes = {
        v.get("name"): (v.get("hostPath") or {}).get("path", "")
        for v in spec.get("volumes") or []
        if isinstance(v, dict) and "hostPath" in v
    }
    out = []
    for c in _containers(spec):
        sc = c.get("securityContext") or {}
        reasons = list(pod_reasons)
        if sc.get("privileged") is True:
            reasons.append("privileged")
        extra = sorted(set((sc.get("capabilities") or {}).get("add") or []) - set(BASELINE_CAPABILITIES))
        reasons += [f"adds {cap}" for cap in extra]
        reasons += [
            f"writes host path {host_volumes[m.get('name')]}"
            for m in c.get("volumeMounts") or []
            if isinstance(m, dict) and m.get("name") in host_volumes and m.get("readOnly") is not True
        ]
        if reasons:
            out.append(HostContainer(str(c.get("name", "")), str(c.get("image", "")), tuple(reasons)))
    return out


def pod_specs(obj: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(path, pod spec) of every pod an object makes: workloads, CronJobs, Trainer runtimes (each replicated job)."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if not isinstance(spec, dict):
        return []
    if kind == "Pod":
        return [("spec", spec)]
    if kind == "CronJob":
        inner = (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")
        return [("spec.jobTemplate.spec.template.spec", inner)] if isinstance(inner, dict) else []
    if kind in WORKLOAD_KINDS:
        inner = (spec.get("template") or {}).get("spec")
        return [("spec.template.spec", inner)] if isinstance(inner, dict) else []
    if kind == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        specs = {k: (lwt.get(k) or {}).get("spec") for k in ("leaderTemplate", "workerTemplate")}
        return [(f"spec.leaderWorkerTemplate.{k}.spec", s) for k, s in specs.items() if isinstance(s, dict)]
    if kind == "JobSet":
        return _replicated(spec.get("replicatedJobs"), "spec.replicatedJobs")
    if kind == "TrainJob":  # runtime patches carry pod specs of their own (containers, volumes)
        out = []
        for i, patch in enumerate(spec.get("runtimePatches") or []):
            jobs = (((patch or {}).get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec") or {}
            out += _replicated(
                jobs.get("replicatedJobs"), f"spec.runtimePatches[{i}].trainingRuntimeSpec.template.spec.replicatedJobs"
            )
        return out
    if kind in ("ClusterTrainingRuntime", "TrainingRuntime"):
        jobs = (((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs")) or []
        out = []
        for i, job in enumerate(jobs):
            inner = (((job.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
            if isinstance(inner, dict):
                out.append((f"spec.template.spec.replicatedJobs[{i}].template.spec.template.spec", inner))
        return out
    return []


def _replicated(jobs: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for i, job in enumerate(jobs if isinstance(jobs, list) else []):
        inner = ((((job or {}).get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        if isinstance(inner, dict):
            out.append((f"{where}[{i}].template.spec.template.spec", inner))
    return out


def _secret_volumes(spec: dict[str, Any]) -> dict[str, list[str]]:
    """Volume name -> the Secrets it carries (a ``secret`` volume, or ``projected`` with ``secret`` sources)."""
    out: dict[str, list[str]] = {}
    for v in spec.get("volumes") or []:
        if not isinstance(v, dict):
            continue
        names = []
        if isinstance(v.get("secret"), dict):
            names.append(str(v["secret"].get("secretName", "")))
        for source in (v.get("projected") or {}).get("sources") or []:
            if isinstance(source, dict) and isinstance(source.get("secret"), dict):
                names.append(str(source["secret"].get("name", "")))
        if names:
            out[str(v.get("name", ""))] = names
    return out


def secret_holding_containers(spec: dict[str, Any], cloud_identity: str | None = None) -> list[HostContainer]:
    """The containers of a pod spec that hold a Secret: mount a volume carrying one, read one into the environment
    (``secretKeyRef``, ``envFrom.secretRef``), or mount an ``emptyDir`` such a container writes (what it made of the
    key, e.g. a database dump); and, with ``cloud_identity`` (the pod's ServiceAccount maps to a cloud identity:
    Workload Identity, Pod Identity), every container, as each may use it. Each with why. A tampered image there
    leaks the key (a Slurm key acts as any Slurm user, a database password owns the accounting data)."""
    volumes = _secret_volumes(spec)
    direct: dict[str, list[str]] = {}
    for c in _containers(spec):
        reasons = [
            f"mounts Secret {s}"
            for m in c.get("volumeMounts") or []
            if isinstance(m, dict)
            for s in volumes.get(str(m.get("name")), [])
        ]
        reasons += [
            f"env from Secret {(e.get('valueFrom') or {}).get('secretKeyRef', {}).get('name', '')}"
            for e in c.get("env") or []
            if isinstance(e, dict) and isinstance((e.get("valueFrom") or {}).get("secretKeyRef"), dict)
        ]
        reasons += [
            f"env from Secret {e['secretRef'].get('name', '')}"
            for e in c.get("envFrom") or []
            if isinstance(e, dict) and isinstance(e.get("secretRef"), dict)
        ]
        if reasons:
            direct[str(c.get("name", ""))] = reasons
    scratch = {str(v.get("name")) for v in spec.get("volumes") or [] if isinstance(v, dict) and "emptyDir" in v}
    written = {
        str(m.get("name")): name
        for c in _containers(spec)
        if (name := str(c.get("name", ""))) in direct
        for m in c.get("volumeMounts") or []
        if isinstance(m, dict) and str(m.get("name")) in scratch and m.get("readOnly") is not True
    }
    out = []
    for c in _containers(spec):
        name = str(c.get("name", ""))
        reasons = list(direct.get(name, []))
        reasons += [
            f"shares emptyDir {v} written by {written[v]}"
            for m in c.get("volumeMounts") or []
            if isinstance(m, dict) and (v := str(m.get("name"))) in written and written[v] != name
        ]
        if cloud_identity:
            reasons.append(f"runs as cloud identity {cloud_identity}")
        if reasons:
            out.append(HostContainer(name, str(c.get("image", "")), tuple(dict.fromkeys(reasons))))
    return out


SECRET_READ_VERBS = ("get", "list", "watch", "*")


def _reads_secrets(rules: Any) -> bool:
    """Some rule lets its holder read every Secret in reach (core group, ``secrets`` or ``*``, a read verb, no
    ``resourceNames`` list)."""
    for rule in rules or []:
        if not isinstance(rule, dict) or rule.get("resourceNames"):
            continue
        if (
            {"", "*"} & set(rule.get("apiGroups") or [])
            and {"secrets", "*"} & set(rule.get("resources") or [])
            and set(SECRET_READ_VERBS) & set(rule.get("verbs") or [])
        ):
            return True
    return False


def secret_reading_service_accounts(objects: list[dict[str, Any]]) -> set[str]:
    """The ServiceAccounts a set of objects (one Helm release, one manifest) binds to a Role or ClusterRole of the
    same set that reads Secrets: an operator that fetches keys through the API (Slinky's operator reads
    ``slurm.key``) holds them as surely as a container that mounts them."""
    roles = {
        (o.get("kind"), (o.get("metadata") or {}).get("name")): o
        for o in objects
        if o.get("kind") in ("Role", "ClusterRole")
    }
    out = set()
    for o in objects:
        if o.get("kind") not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        ref = o.get("roleRef") or {}
        role = roles.get((ref.get("kind"), ref.get("name")))
        if role is not None and _reads_secrets(role.get("rules")):
            out |= {
                str(s.get("name"))
                for s in o.get("subjects") or []
                if isinstance(s, dict) and s.get("kind") == "ServiceAccount"
            }
    return out


def secret_reading_containers(spec: dict[str, Any], readers: set[str]) -> list[HostContainer]:
    """Every container of a pod running as one of ``readers`` (``secret_reading_service_accounts``)."""
    if spec.get("serviceAccountName") not in readers:
        return []
    reason = f"reads Secrets as ServiceAccount {spec['serviceAccountName']}"
    return [HostContainer(str(c.get("name", "")), str(c.get("image", "")), (reason,)) for c in _containers(spec)]
