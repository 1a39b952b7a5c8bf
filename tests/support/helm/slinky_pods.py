"""The pods Slinky's operator makes from the custom resources the slurm chart renders (Controller, RestApi,
Accounting, LoginSet, NodeSet), as far as which container runs which image and which Secret it holds.

The chart's objects carry no Secret volume: the operator adds the keys when it builds each pod. Which container gets
which key is read here from the operator's builders (SlinkyProject/slurm-operator ``internal/builder``), independently
of ``catalog/data/secret-holding-images.csv``, so the tests can compare the two:
- Controller (``controllerbuilder/controller_app.go``): volume ``slurm-etc`` projects ``slurmKeyRef`` and
  ``jwtKeyRef``; slurmctld and, with ``inplaceReconfigure``, the ``reconfigure`` container mount it; the ``logfile``
  init container mounts only the log volume.
- RestApi (``restapibuilder/restapi_app.go``) and Accounting (``accountingbuilder``): slurmrestd/slurmdbd mount the
  cluster's slurm.key and JWT key; slurmdbd also reads the database password (``storageConfig.passwordKeyRef``).
- LoginSet (``loginbuilder/login_app.go``): the ``initconf`` init container copies slurm.key (volume
  ``slurm-config``); login mounts the SSH host keys and the ``sssdConfRef`` Secret.
- NodeSet: slurmd holds slurm.key (and runs privileged); the ``logfile`` container only the log volume.
"""

from __future__ import annotations

from typing import Any

KINDS = ("Controller", "RestApi", "Accounting", "LoginSet", "NodeSet")


def _secret_volume(name: str, secrets: list[str]) -> dict[str, Any]:
    return {"name": name, "projected": {"sources": [{"secret": {"name": s}} for s in secrets if s]}}


def _container(name: str, spec: Any, mounts: list[str], **extra: Any) -> dict[str, Any]:
    spec = spec if isinstance(spec, dict) else {}
    return {
        **spec,
        "name": name,
        "volumeMounts": [*(spec.get("volumeMounts") or []), *({"name": m, "mountPath": f"/{m}"} for m in mounts)],
        **extra,
    }


def _ref(spec: dict[str, Any], key: str) -> str:
    return str((spec.get(key) or {}).get("name", ""))


def _keys(objects: list[dict[str, Any]]) -> list[str]:
    """The Secrets of the cluster's slurm.key and JWT key (from its Controller)."""
    controllers = [o["spec"] for o in objects if o.get("kind") == "Controller"]
    return [_ref(c, k) for c in controllers for k in ("slurmKeyRef", "jwtKeyRef")]


def slinky_pod(obj: dict[str, Any], objects: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The pod spec the operator makes for ``obj`` (None for other kinds); ``objects``: the release's objects."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind not in KINDS:
        return None
    pod = dict((spec.get("template") or {}).get("spec") or {})
    volumes = list(pod.get("volumes") or [])
    inits = list(pod.get("initContainers") or [])
    containers = list(pod.get("containers") or [])
    keys = _keys(objects)
    if kind == "Controller":
        volumes.append(_secret_volume("slurm-etc", [_ref(spec, "slurmKeyRef"), _ref(spec, "jwtKeyRef")]))
        containers.append(_container("slurmctld", spec.get("slurmctld"), ["slurm-etc"]))
        if spec.get("inplaceReconfigure"):
            inits.append(_container("reconfigure", spec.get("reconfigure"), ["slurm-etc"]))
        inits.append(_container("logfile", spec.get("logfile"), []))
    elif kind == "RestApi":
        volumes.append(_secret_volume("slurm-etc", keys))
        containers.append(_container("slurmrestd", spec.get("slurmrestd"), ["slurm-etc"]))
    elif kind == "Accounting":
        password = _ref(spec.get("storageConfig") or {}, "passwordKeyRef")
        volumes.append(_secret_volume("slurm-etc", [_ref(spec, "slurmKeyRef"), _ref(spec, "jwtKeyRef"), password]))
        containers.append(_container("slurmdbd", spec.get("slurmdbd"), ["slurm-etc"]))
    elif kind == "LoginSet":
        volumes += [
            _secret_volume("slurm-config", keys[:1]),
            _secret_volume("ssh-host-keys", [f"{obj['metadata']['name']}-ssh-host-keys"]),
            _secret_volume("sssd-conf", [_ref(spec, "sssdConfRef")]),
        ]
        inits.append(_container("initconf", spec.get("initconf"), ["slurm-config"]))
        containers.append(_container("login", spec.get("login"), ["ssh-host-keys", "sssd-conf"]))
    else:  # NodeSet: Slinky's operator runs slurmd privileged whatever the values say
        volumes.append(_secret_volume("slurm-config", keys[:1]))
        containers.append(
            _container("slurmd", spec.get("slurmd"), ["slurm-config"], securityContext={"privileged": True})
        )
        if spec.get("logfile"):
            inits.append(_container("logfile", spec.get("logfile"), []))
    return {**pod, "volumes": volumes, "initContainers": inits, "containers": containers}
