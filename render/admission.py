"""Pool facts + the namespaces jobs run in -> the ValidatingAdmissionPolicies that keep tenants in their lane. Pure.

Three policies, each with its binding, all derived from what the renderers put into pods (``render/fabric_pod.py``
through the Trainer runtimes and the Slinky NodeSets), so a change to the fabric's pods changes what is admitted:

- ``gpu-cluster-fabric-pods``, bound to the team namespaces whose queues have quota on a GKE GPUDirect pool (their
  Pod Security label must say ``privileged``, because Pod Security admission cannot make an exception for one
  container): Pod Security ``baseline`` in CEL (``render/pod_security_cel.py``) plus exactly the fabric's needs:
  the fabric's hostPath volumes (exact paths; read-only where every rendered mount is; ``/sys``-like paths only in
  the sidecar), and capabilities beyond baseline only on the RxDM sidecar exactly as rendered
  (``render/sidecar_cel.py``), which no ephemeral container may target.
- ``gpu-cluster-fabric-exec``, bound where the fabric policy is: exec and attach only into a named container that is
  not the sidecar.
- ``gpu-cluster-device-annotations``, cluster-wide (``kube-system`` aside): the NRI device injector adds any host
  device a pod names in a ``devices.gke.io/*`` annotation, after admission. Only ``devices.gke.io/container.<sidecar>``
  is admitted, only in the namespaces fabric jobs run in, only naming the GPU devices the renderer lists, only for the
  pinned sidecar and only in a pod that holds the node's GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from render.fabric_pod import PodFabric, pod_fabric
from render.pod_security_cel import CONTAINER_VARIABLES, cel_list, validations
from render.sidecar_cel import Sidecar, is_sidecar, sidecar_of
from stacks.plan.facts import PoolFacts

API_VERSION = "admissionregistration.k8s.io/v1"
FABRIC_POLICY = "gpu-cluster-fabric-pods"
DEVICE_POLICY = "gpu-cluster-device-annotations"
DEVICE_PREFIX = "devices.gke.io"
CONTAINER_PREFIX = DEVICE_PREFIX + "/container."
GPU_RESOURCE = "nvidia.com/gpu"
EXEMPT_NAMESPACES = ("kube-system",)
"""GKE's own system pods; tenants cannot create pods there."""
LABELS = {"app.kubernetes.io/part-of": "gpu-cluster"}
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Set by the API server on every namespace and immutable, so a binding selecting on it cannot be escaped by labels."""
EXEC_POLICY = "gpu-cluster-fabric-exec"
EXEC_RULE = {
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "operations": ["CONNECT"],
    "resources": ["pods/exec", "pods/attach"],
}
"""``kubectl exec`` / ``attach`` is a CONNECT request whose ``object`` is the PodExecOptions / PodAttachOptions."""
POD_RULE = {
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "operations": ["CREATE", "UPDATE"],
    "resources": ["pods", "pods/ephemeralcontainers"],
}


@dataclass(frozen=True)
class FabricNeeds:
    """What the fabric's pods need beyond baseline, over every host-access fabric pool of the stack."""

    sidecars: tuple[Sidecar, ...]
    host_paths: tuple[str, ...]
    sidecar_only_paths: tuple[str, ...]
    """hostPaths only the sidecar mounts (``/sys``, ``/proc/sys``): no other container may mount them."""
    read_only_paths: tuple[str, ...]
    """hostPaths every rendered mount reads only (the NCCL plugin libraries): every mount must be read-only."""
    device_keys: tuple[str, ...]
    device_paths: tuple[str, ...]
    gpus_per_node: tuple[int, ...]


def fabric_needs(fabrics: Iterable[PodFabric | None], gpus: Iterable[int] = ()) -> FabricNeeds:
    sidecars: dict[str, Sidecar] = {}
    paths: dict[str, dict[str, bool]] = {}  # path -> {"main": mounted by a main container, "rw": some mount writes}
    keys: set[str] = set()
    devices: set[str] = set()
    for f in fabrics:
        if f is None or not f.host_access:
            continue
        by_volume = {v["name"]: v["hostPath"]["path"] for v in f.volumes if "hostPath" in v}
        for path in by_volume.values():
            paths.setdefault(path, {"main": False, "rw": False})
        for s in f.sidecars:
            sidecars[s["name"]] = sidecar_of(s, {v["name"]: v for v in f.volumes})
            for m in s.get("volumeMounts", ()):
                if m["name"] in by_volume and not m.get("readOnly"):
                    paths[by_volume[m["name"]]]["rw"] = True
        # the fabric-ready gate's marker directory: read-only, harmless to any container (not sidecar-only)
        for m in [*f.mounts, *(m for c in f.init for m in c.get("volumeMounts", ()))]:
            if m["name"] in by_volume:
                paths[by_volume[m["name"]]]["main"] = True
                if not m.get("readOnly"):
                    paths[by_volume[m["name"]]]["rw"] = True
        for key, value in f.annotations.items():
            if key.startswith(DEVICE_PREFIX):
                keys.add(key)
                devices.update(line.removeprefix("- path: ") for line in value.splitlines())
    return FabricNeeds(
        sidecars=tuple(sidecars[n] for n in sorted(sidecars)),
        host_paths=tuple(sorted(paths)),
        sidecar_only_paths=tuple(sorted(p for p, u in paths.items() if not u["main"])),
        read_only_paths=tuple(sorted(p for p, u in paths.items() if not u["rw"])),
        device_keys=tuple(sorted(keys)),
        device_paths=tuple(sorted(devices)),
        gpus_per_node=tuple(sorted(set(gpus))),
    )


def stack_needs(pools: Sequence[PoolFacts]) -> FabricNeeds:
    with_access = [(p, f) for p in pools if (f := pod_fabric(p)) is not None and f.host_access]
    return fabric_needs((f for _, f in with_access), (p.gpus_per_node for p, _ in with_access))


def _is_sidecar(c: str, needs: FabricNeeds) -> str:
    """CEL: container ``c`` is one of the fabric's sidecars exactly as rendered (``render/sidecar_cel.py``), by
    name from ``variables.exactSidecars`` (container names are unique in a pod; the long match runs once)."""
    return f"({c}.name in variables.exactSidecars)" if needs.sidecars else "false"


def _sidecar_validations(needs: FabricNeeds) -> list[dict[str, str]]:
    """A container named like the sidecar is the rendered sidecar; nothing else reaches into it."""
    if not needs.sidecars:
        return []
    names = cel_list(s.name for s in needs.sidecars)
    listed = ", ".join(s.name for s in needs.sidecars)
    return [
        {
            "expression": f"variables.containers.all(c, !(c.name in {names}) || {_is_sidecar('c', needs)})",
            "message": f"a container named {listed} must be the GPU fabric's sidecar exactly as rendered: the pinned "
            "image and command, the rendered env, volume mounts (no subPath, the rendered volumes), "
            "securityContext and restartPolicy, and no args, workingDir, envFrom, probes, lifecycle hooks, "
            "ports or tty; remove the container and let the training runtime add it",
        },
        {
            "expression": "variables.ephemeral.all(c, !has(c.targetContainerName) || "
            f"!(c.targetContainerName in {names}))",
            "message": f"ephemeral containers may not target the GPU fabric's sidecar ({listed}): they would share its "
            "processes, which hold NET_ADMIN and the host's /sys",
        },
        {
            "expression": "!(has(object.spec.shareProcessNamespace) && object.spec.shareProcessNamespace) || "
            f"!variables.containers.exists(c, c.name in {names})",
            "message": f"a pod with the GPU fabric's sidecar ({listed}) may not share its process namespace",
        },
        # the pod-level identity reaches every container, the sidecar's NET_ADMIN and host /proc/sys included
        {
            "expression": f"!variables.containers.exists(c, c.name in {names}) || !has(object.spec.securityContext) || "
            "((!has(object.spec.securityContext.runAsUser) || object.spec.securityContext.runAsUser != 0) "
            "&& !has(object.spec.securityContext.runAsGroup) && "
            "!has(object.spec.securityContext.supplementalGroups) && "
            "!has(object.spec.securityContext.fsGroup))",
            "message": f"a pod with the GPU fabric's sidecar ({listed}) sets no pod-level runAsUser 0, runAsGroup, "
            "supplementalGroups or fsGroup: they apply to the sidecar too, which holds NET_ADMIN and the "
            "host's /proc/sys; set them on the training containers instead",
        },
    ]


def _host_path_validations(needs: FabricNeeds) -> list[dict[str, str]]:
    sidecar = _is_sidecar("c", needs)
    return [
        {
            "expression": "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath) || "
            f"v.hostPath.path in {cel_list(needs.host_paths)})",
            "message": f"hostPath volumes are refused except the GPU fabric's: {', '.join(needs.host_paths) or 'none'}",
        },
        {
            "expression": f"variables.containers.all(c, {sidecar} || !has(c.volumeMounts) || "
            "c.volumeMounts.all(m, !(m.name in variables.sidecarOnly)))",
            "message": "only the GPU fabric's sidecar may mount " + (", ".join(needs.sidecar_only_paths) or "-"),
        },
        {
            "expression": "variables.containers.all(c, !has(c.volumeMounts) || c.volumeMounts.all(m, "
            "!(m.name in variables.readOnly) || (has(m.readOnly) && m.readOnly)))",
            "message": "the GPU fabric's library paths must be mounted read-only: "
            + (", ".join(needs.read_only_paths) or "-"),
        },
        {
            "expression": "variables.ephemeral.all(c, !has(c.volumeMounts) || "
            "c.volumeMounts.all(m, !(m.name in variables.hostVolumes)))",
            "message": "ephemeral containers may not mount hostPath volumes",
        },
    ]


def _volumes_with(paths: Sequence[str]) -> str:
    return (
        f"has(object.spec.volumes) ? object.spec.volumes.filter(v, has(v.hostPath) && "
        f"v.hostPath.path in {cel_list(paths)}).map(v, v.name) : []"
    )


def fabric_policy(needs: FabricNeeds) -> dict[str, Any]:
    variables = [
        *CONTAINER_VARIABLES,
        {
            "name": "hostVolumes",
            "expression": "has(object.spec.volumes) ? object.spec.volumes.filter(v, "
            "has(v.hostPath)).map(v, v.name) : []",
        },
        {"name": "sidecarOnly", "expression": _volumes_with(needs.sidecar_only_paths)},
        {
            "name": "exactSidecars",
            "expression": "variables.containers.filter(c, c.name in "
            f"{cel_list(s.name for s in needs.sidecars)}).filter(c, "
            f"{is_sidecar('c', needs.sidecars)}).map(c, c.name)",
        },
        {"name": "readOnly", "expression": _volumes_with(needs.read_only_paths)},
    ]
    return validating_policy(
        FABRIC_POLICY,
        variables,
        validations(_is_sidecar("c", needs)) + _sidecar_validations(needs) + _host_path_validations(needs),
    )


def device_regex(paths: Sequence[str]) -> str:
    """RE2 (and Python) pattern of the injector's list in exactly the renderer's form, one listed path per line."""
    for p in paths:
        if not p.startswith("/dev/") or not all(ch.isalnum() or ch in "/_-" for ch in p):
            raise ValueError(f"device path {p!r} cannot go into the pattern as is")
    return "^(- path: (" + "|".join(paths) + ")\\\\n)+$"


def device_policy(needs: FabricNeeds, namespaces: Sequence[str] | None) -> dict[str, Any]:
    """``namespaces``: where device annotations are admitted; None: anywhere (a stack without a scheduler, whose
    jobs run in namespaces gpu-cluster does not know)."""
    images = cel_list(sorted({s.image for s in needs.sidecars}))
    gpus = cel_list(str(n) for n in needs.gpus_per_node)
    whole_node = (
        f"variables.containers.exists(c, has(c.resources) && has(c.resources.limits) && "
        f"'{GPU_RESOURCE}' in c.resources.limits && string(c.resources.limits['{GPU_RESOURCE}']) in {gpus})"
    )
    variables = [
        *CONTAINER_VARIABLES[:1],
        {
            "name": "deviceKeys",
            "expression": "has(object.metadata.annotations) ? object.metadata.annotations"
            f".filter(k, k.startsWith('{DEVICE_PREFIX}')) : []",
        },
    ]
    checks = [
        {
            "expression": f"variables.deviceKeys.all(k, k in {cel_list(needs.device_keys)})",
            "message": f"{DEVICE_PREFIX} annotations are refused except {', '.join(needs.device_keys) or 'none'} "
            f"(the NRI device injector would add any host device they name)",
        },
        *(
            [
                {
                    "expression": f"variables.deviceKeys.size() == 0 || request.namespace in {cel_list(namespaces)}",
                    "message": f"{DEVICE_PREFIX} annotations are only admitted where GPU fabric jobs run: "
                    + (", ".join(namespaces) or "nowhere"),
                }
            ]
            if namespaces is not None
            else []
        ),
        {
            "expression": "variables.deviceKeys.all(k, object.metadata.annotations[k].matches('"
            + device_regex(needs.device_paths)
            + "'))",
            "message": "a device annotation may only list the GPU devices, one '- path: /dev/...' line each: "
            + ", ".join(needs.device_paths),
        },
        {
            "expression": "variables.deviceKeys.all(k, has(object.spec.initContainers) && object.spec.initContainers"
            f".exists(c, '{CONTAINER_PREFIX}' + c.name == k && c.image in {images}))",
            "message": "a device annotation must name the GPU fabric's sidecar running the pinned RxDM image",
        },
        {
            "expression": f"variables.deviceKeys.size() == 0 || {whole_node}",
            "message": f"a pod with device annotations must hold the node's GPUs ({GPU_RESOURCE} limit "
            f"{' or '.join(str(n) for n in needs.gpus_per_node)})",
        },
    ]
    return validating_policy(DEVICE_POLICY, variables, checks)


def exec_policy(needs: FabricNeeds) -> dict[str, Any]:
    """``kubectl exec``/``attach`` only into a named container that is not the fabric's sidecar: inside it a tenant
    would hold ``NET_ADMIN`` and a writable host ``/sys`` and ``/proc/sys``, which the admission policies let only the
    rendered command use. Without a container name the API server picks one for the caller, so that is refused too
    (the PodExecOptions do not say which pod's containers are there to pick from)."""
    names = [s.name for s in needs.sidecars]
    policy = validating_policy(
        EXEC_POLICY,
        [],
        [
            {
                "expression": f"has(object.container) && object.container != '' && !(object.container in {cel_list(names)})",
                "message": f"exec and attach must name the container (kubectl exec -c <container>), and never the GPU "
                f"fabric's sidecar ({', '.join(names)}): it holds NET_ADMIN and the host's /sys",
            }
        ],
        rule=EXEC_RULE,
    )
    del policy["spec"]["variables"]
    return policy


def validating_policy(
    name: str, variables: list[dict[str, str]], checks: list[dict[str, str]], rule: dict[str, Any] = POD_RULE
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": dict(LABELS)},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [dict(rule)]},
            "variables": variables,
            "validations": checks,
        },
    }


def binding(policy: str, namespaces: Sequence[str] | None = None) -> dict[str, Any]:
    """``namespaces``: only these (by their immutable name label); None: every namespace but ``EXEMPT_NAMESPACES``."""
    expr = (
        {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": list(namespaces)}
        if namespaces is not None
        else {"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": list(EXEMPT_NAMESPACES)}
    )
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": policy, "labels": dict(LABELS)},
        "spec": {
            "policyName": policy,
            "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchExpressions": [expr]}},
        },
    }


def admission_objects(
    pools: Sequence[PoolFacts], team_namespaces: Mapping[str, Sequence[str]] | None, slurm_namespace: str | None = None
) -> list[dict[str, Any]]:
    """The policies and bindings a stack needs (none without a host-access fabric pool). ``team_namespaces``: pool
    name -> the team namespaces whose jobs run on it (Kueue); ``slurm_namespace``: where the NodeSets run (Slurm);
    both None: the stack has no scheduler, so device annotations are not limited to namespaces."""
    needs = stack_needs(pools)
    fabric_pools = [p.name for p in pools if (f := pod_fabric(p)) is not None and f.host_access]
    if not fabric_pools:
        return []
    teams = list(dict.fromkeys(ns for p in fabric_pools for ns in (team_namespaces or {}).get(p, ())))
    out: list[dict[str, Any]] = []
    if teams:
        out += [fabric_policy(needs), binding(FABRIC_POLICY, teams)]
        if needs.sidecars:
            out += [exec_policy(needs), binding(EXEC_POLICY, teams)]
    if needs.device_keys:
        scheduled = team_namespaces is not None or slurm_namespace is not None
        device_ns = teams + ([slurm_namespace] if slurm_namespace else []) if scheduled else None
        out += [device_policy(needs, device_ns), binding(DEVICE_POLICY)]
    return out
