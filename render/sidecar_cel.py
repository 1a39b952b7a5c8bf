"""The GPU fabric's RxDM sidecar, as rendered, written as CEL that matches only that container. Pure: no Pulumi.

The sidecar is the one container a team namespace on a GPUDirect-TCPX(O) pool may run with ``NET_ADMIN`` and the
host's ``/sys`` and ``/proc/sys`` writable (as uid 0, which writable ``/proc/sys`` turns into node root through
``kernel.core_pattern``). So the exemption must hold for the rendered program only: the same image and command, and
nothing that runs other code inside it or changes what that program loads:

- no ``args``, ``workingDir``, ``envFrom``, probes, ``lifecycle`` hooks (each runs a command in the container),
  ``ports``, ``volumeDevices``, ``stdin``/``tty`` (attach);
- exactly the rendered ``env`` (``LD_PRELOAD`` would load a tenant's library into the sidecar), literal values only;
- only the rendered mounts, at the rendered paths, without ``subPath``/``mountPropagation``, and every volume they
  name has the rendered source (a ConfigMap named like the library volume, under ``LD_LIBRARY_PATH``, or one mounted
  over the binary, would run a tenant's code);
- exactly the rendered ``securityContext`` (capabilities; no ``runAsUser`` or other overrides) and ``restartPolicy``.

Fields the API server defaults before admission (``imagePullPolicy``, ``terminationMessage*``, ``resources``) stay
free: they do not change what runs. Only fields of the Kubernetes ``Container`` schema appear in ``has()`` (the API
server refuses to compile a ``has()`` on a field its schema lacks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from render.pod_security_cel import cel_list

FORBIDDEN_FIELDS = (
    "args",
    "workingDir",
    "envFrom",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "ports",
    "volumeDevices",
    "stdin",
    "stdinOnce",
    "tty",
)
"""Container fields the rendered sidecar leaves unset and a tenant may not set on it."""
SECURITY_FIELDS = (
    "privileged",
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "allowPrivilegeEscalation",
    "readOnlyRootFilesystem",
    "procMount",
    "seccompProfile",
    "seLinuxOptions",
    "appArmorProfile",
    "windowsOptions",
)
"""Every ``securityContext`` field but ``capabilities``: the rendered sidecar sets none of them."""
MOUNT_FIELDS = ("subPath", "subPathExpr", "mountPropagation")


@dataclass(frozen=True)
class Sidecar:
    """The rendered sidecar, reduced to what the CEL compares."""

    name: str
    image: str
    command: tuple[str, ...]
    capabilities: tuple[str, ...]
    restart_policy: str = "Always"
    env: tuple[tuple[str, str], ...] = ()
    mounts: tuple[tuple[str, str, bool], ...] = ()
    """(volume name, mountPath, read-only)"""
    sources: tuple[tuple[str, str, str], ...] = ()
    """(volume name, ``hostPath`` or ``emptyDir``, host path or '') of every volume the sidecar mounts."""


def sidecar_of(container: Mapping[str, Any], volumes: Mapping[str, Mapping[str, Any]]) -> Sidecar:
    """``container`` as rendered; ``volumes``: the pod's volumes by name."""
    for f in FORBIDDEN_FIELDS:
        if f in container:
            raise ValueError(f"the sidecar {container['name']} sets {f}: the admission CEL cannot pin it")
    sc = dict(container.get("securityContext", {}))
    if set(sc) - {"capabilities"}:
        raise ValueError(f"the sidecar {container['name']} sets {sorted(set(sc) - {'capabilities'})}")
    mounts = tuple((m["name"], m["mountPath"], bool(m.get("readOnly"))) for m in container.get("volumeMounts", ()))
    sources = []
    for name, _, _ in mounts:
        v = volumes[name]
        if "hostPath" in v:
            sources.append((name, "hostPath", v["hostPath"]["path"]))
        elif "emptyDir" in v:
            sources.append((name, "emptyDir", ""))
        else:
            raise ValueError(f"the sidecar {container['name']} mounts {name}, neither hostPath nor emptyDir")
    out = Sidecar(
        name=container["name"],
        image=container["image"],
        command=tuple(container.get("command", ())),
        capabilities=tuple(sc.get("capabilities", {}).get("add", ())),
        restart_policy=container.get("restartPolicy", ""),
        env=tuple((e["name"], e["value"]) for e in container.get("env", ())),
        mounts=mounts,
        sources=tuple(sources),
    )
    cel_list(
        [
            out.name,
            out.image,
            *out.command,
            *(x for pair in out.env for x in pair),
            *(x for m in mounts for x in m[:2]),
            *(src[2] for src in out.sources),
        ]
    )  # raises on a value CEL cannot quote as is
    return out


def _env(c: str, s: Sidecar) -> str:
    if not s.env:
        return f"!has({c}.env)"
    pairs = " || ".join(f"(e.name == '{n}' && e.value == '{v}')" for n, v in s.env)
    return f"(!has({c}.env) || {c}.env.all(e, has(e.value) && !has(e.valueFrom) && ({pairs})))"


def _mounts(c: str, s: Sidecar) -> str:
    if not s.mounts:
        return f"!has({c}.volumeMounts)"
    one = " || ".join(
        f"(m.name == '{n}' && m.mountPath == '{p}'" + (" && has(m.readOnly) && m.readOnly" if ro else "") + ")"
        for n, p, ro in s.mounts
    )
    free = " && ".join(f"!has(m.{f})" for f in MOUNT_FIELDS)
    return f"(!has({c}.volumeMounts) || {c}.volumeMounts.all(m, {free} && ({one})))"


def _sources(s: Sidecar) -> str:
    """The pod's volumes the sidecar may mount have the rendered sources (the mount check admits no other name)."""
    out = []
    for name, kind, path in s.sources:
        source = f"has(v.hostPath) && v.hostPath.path == '{path}'" if kind == "hostPath" else "has(v.emptyDir)"
        out.append(f"!has(object.spec.volumes) || object.spec.volumes.all(v, v.name != '{name}' || ({source}))")
    return " && ".join(f"({o})" for o in out) if out else "true"


def _security(c: str, s: Sidecar) -> str:
    sc = f"{c}.securityContext"
    if not s.capabilities:
        return f"!has({sc})"
    others = " && ".join(f"!has({sc}.{f})" for f in SECURITY_FIELDS)
    return (
        f"(has({sc}) && {others} && has({sc}.capabilities) && has({sc}.capabilities.add) && "
        f"{sc}.capabilities.add == {cel_list(s.capabilities)})"
    )


def matches(c: str, s: Sidecar) -> str:
    """CEL: container ``c`` is the sidecar ``s`` exactly as rendered (see the module doc)."""
    unset = " && ".join(f"!has({c}.{f})" for f in FORBIDDEN_FIELDS)
    return (
        f"({c}.name == '{s.name}' && {c}.image == '{s.image}' && has({c}.command) && "
        f"{c}.command == {cel_list(s.command)} && {unset} && "
        f"has({c}.restartPolicy) && {c}.restartPolicy == '{s.restart_policy}' && "
        f"{_security(c, s)} && {_env(c, s)} && {_mounts(c, s)} && {_sources(s)})"
    )


def is_sidecar(c: str, sidecars: tuple[Sidecar, ...]) -> str:
    """CEL: ``c`` is one of the fabric's sidecars, exactly as rendered."""
    return "(" + " || ".join(matches(c, s) for s in sidecars) + ")" if sidecars else "false"
