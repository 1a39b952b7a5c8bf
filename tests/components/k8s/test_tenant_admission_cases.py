"""The admission policies' CEL, run by cel-python, on one-field changes of a pod that must pass (the TCPX runtime's
pod of ``gke-flex-start-tas`` in a team namespace with quota on it), each refused with the exact message; the pods
Helm renders from our values (every Slinky NodeSet, every pod template of every release) against the device policy;
and the Python model of Pod Security baseline agreeing with the CEL on every case outside the fabric's exceptions."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

from render.admission import DEVICE_POLICY, FABRIC_POLICY
from tests.support.kube.admission import (
    admission_failures,
    fabric_case,
    k8s_objects,
    pod_from_template,
    policy_failures,
    psa_baseline_failures,
)
from tests.support.helm.examples import recording, rendered

BASELINE = "Pod Security baseline (enforced by gpu-cluster): refuses "


def _main(pod: dict[str, Any]) -> dict[str, Any]:
    return pod["spec"]["containers"][0]


def _sidecar(pod: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in pod["spec"]["initContainers"] if c.get("restartPolicy") == "Always")  # not the gate


def _volume(pod: dict[str, Any], path: str) -> str:
    return next(v["name"] for v in pod["spec"]["volumes"] if v.get("hostPath", {}).get("path") == path)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(pod: dict[str, Any]) -> None:
        target = pod
        *steps, last = path.split(".")
        for step in steps:
            target = target.setdefault(step, {})
        target[last] = value

    return change


def _mount_sys_in_main(pod):
    _main(pod)["volumeMounts"].append({"name": _volume(pod, "/sys"), "mountPath": "/host-sys"})


def _writable_libraries(pod):
    for m in _main(pod)["volumeMounts"]:
        m.pop("readOnly", None)


def _ephemeral_privileged(pod):
    pod["spec"]["ephemeralContainers"] = [
        {"name": "debug", "image": "busybox:1.37", "securityContext": {"privileged": True}}
    ]


def _host_path(path):
    return lambda pod: pod["spec"]["volumes"].append({"name": "x", "hostPath": {"path": path}})


def _device(value):
    def change(pod):
        key = next(k for k in pod["metadata"]["annotations"] if k.startswith("devices.gke.io"))
        pod["metadata"]["annotations"][key] = value

    return change


def _annotate(key, value="- path: /dev/nvidia0\n"):
    return lambda pod: pod["metadata"]["annotations"].__setitem__(key, value)


def _one_gpu(pod):
    _main(pod)["resources"] = {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}


FABRIC_CASES = [
    (
        "net-admin on the main container",
        lambda p: _main(p).__setitem__("securityContext", {"capabilities": {"add": ["NET_ADMIN"]}}),
        BASELINE + "capabilities beyond baseline",
    ),
    (
        "sys-admin on the sidecar",
        lambda p: _sidecar(p)["securityContext"]["capabilities"]["add"].append("SYS_ADMIN"),
        BASELINE + "capabilities beyond baseline",
    ),
    (
        "sidecar with another image",
        lambda p: _sidecar(p).__setitem__("image", "evil.example/rxdm:latest"),
        BASELINE + "capabilities beyond baseline",
    ),
    (
        "sidecar running a shell",
        lambda p: _sidecar(p).__setitem__("command", ["/bin/sh", "-c", "sleep inf"]),
        BASELINE + "capabilities beyond baseline",
    ),
    ("host /sys in the main container", _mount_sys_in_main, "only the GPU fabric's sidecar may mount /proc/sys, /sys"),
    (
        "writable NCCL libraries",
        _writable_libraries,
        "the GPU fabric's library paths must be mounted read-only: /home/kubernetes/bin/gpu-cluster, "
        "/home/kubernetes/bin/nvidia/lib64",
    ),
    (
        "hostPath outside the fabric's",
        _host_path("/sys/../etc"),
        "hostPath volumes are refused except the GPU fabric's: /home/kubernetes/bin/gpu-cluster, "
        "/home/kubernetes/bin/nvidia/lib64, /proc/sys, /sys",
    ),
    (
        "privileged ephemeral container",
        _ephemeral_privileged,
        BASELINE + "privileged containers in ephemeral containers",
    ),
    ("hostIPC", _set("spec.hostIPC", True), BASELINE + "host namespaces (hostNetwork, hostPID, hostIPC)"),
    (
        "host port",
        lambda p: _main(p).__setitem__("ports", [{"containerPort": 22, "hostPort": 22}]),
        BASELINE + "host ports",
    ),
    (
        "unsafe sysctl",
        _set("spec.securityContext", {"sysctls": [{"name": "kernel.core_pattern", "value": "|/x"}]}),
        BASELINE + "unsafe sysctls",
    ),
    (
        "seccomp unconfined",
        _set("spec.securityContext", {"seccompProfile": {"type": "Unconfined"}}),
        BASELINE + "seccomp Unconfined",
    ),
    (
        "unmasked /proc",
        lambda p: _main(p).__setitem__("securityContext", {"procMount": "Unmasked"}),
        BASELINE + "an unmasked /proc mount",
    ),
]
DEVICE_CASES = [
    (
        "boot disk in the device list",
        _device("- path: /dev/nvidia0\n- path: /dev/sda\n"),
        "a device annotation may only list the GPU devices",
    ),
    ("device list in another form", _device("[{path: /dev/sda}]"), "a device annotation may only list the GPU devices"),
    ("devices.gke.io/pod", _annotate("devices.gke.io/pod"), "devices.gke.io annotations are refused except"),
    (
        "devices for the main container",
        _annotate("devices.gke.io/container.node"),
        "devices.gke.io annotations are refused except",
    ),
    ("devices without the node's GPUs", _one_gpu, "a pod with device annotations must hold the node's GPUs"),
    (
        "sidecar with another image",
        lambda p: _sidecar(p).__setitem__("image", "evil.example/rxdm:latest"),
        "a device annotation must name the GPU fabric's sidecar running the pinned RxDM image",
    ),
]


def _policies(objects):
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"}


@pytest.fixture(scope="module")
def tcpx():
    objects, ns, pod = fabric_case("gke-flex-start-tas")
    assert policy_failures(_policies(objects)[FABRIC_POLICY], pod, ns) == []
    assert policy_failures(_policies(objects)[DEVICE_POLICY], pod, ns) == []
    return objects, ns, pod


@pytest.mark.parametrize("what, change, message", FABRIC_CASES, ids=[c[0] for c in FABRIC_CASES])
def test_fabric_policy_refuses(tcpx, what, change, message):
    objects, ns, pod = tcpx
    bad = copy.deepcopy(pod)
    change(bad)
    failures = policy_failures(_policies(objects)[FABRIC_POLICY], bad, ns)
    assert any(f.startswith(message) for f in failures), failures


@pytest.mark.parametrize("what, change, message", DEVICE_CASES, ids=[c[0] for c in DEVICE_CASES])
def test_device_policy_refuses(tcpx, what, change, message):
    objects, ns, pod = tcpx
    bad = copy.deepcopy(pod)
    change(bad)
    failures = policy_failures(_policies(objects)[DEVICE_POLICY], bad, ns)
    assert any(f.startswith(message) for f in failures), failures


def test_device_policy_refuses_the_fabric_pod_in_a_namespace_without_fabric_quota(tcpx):
    objects, _, pod = tcpx
    failures = policy_failures(_policies(objects)[DEVICE_POLICY], pod, "default")
    assert failures == ["devices.gke.io annotations are only admitted where GPU fabric jobs run: research, product-ml"]


@pytest.mark.parametrize("what, change, message", FABRIC_CASES, ids=[c[0] for c in FABRIC_CASES])
def test_the_python_baseline_model_and_the_cel_agree(tcpx, what, change, message):
    """Outside the fabric's exceptions (the runtime pod's own hostPaths and sidecar capabilities), a change the
    Python model of Pod Security baseline refuses is refused by the CEL, and the other way round."""
    objects, ns, pod = tcpx
    bad = copy.deepcopy(pod)
    change(bad)
    allowed = set(psa_baseline_failures(pod))
    model = [f for f in psa_baseline_failures(bad) if f not in allowed]
    cel = policy_failures(_policies(objects)[FABRIC_POLICY], bad, ns)
    # the model has no notion of "the sidecar as rendered" or of read-only mounts: the fabric's exceptions
    in_model = bool(model) or what in (
        "sidecar with another image",
        "sidecar running a shell",
        "host /sys in the main container",
        "writable NCCL libraries",
    )
    checks_only_in_cel = ("unsafe sysctl", "seccomp unconfined", "unmasked /proc")
    assert bool(cel) == (in_model or what in checks_only_in_cel), (model, cel)


def _nodeset_pod(nodeset: dict[str, Any]) -> dict[str, Any]:
    """The pod Slinky's operator makes of a NodeSet: its template plus the slurmd container from ``spec.slurmd``."""
    pod = pod_from_template(nodeset["spec"]["template"])
    slurmd = {"name": "slurmd", **{k: v for k, v in nodeset["spec"]["slurmd"].items() if v is not None}}
    pod["spec"] = {**pod["spec"], "containers": [*(pod["spec"].get("containers") or []), slurmd]}
    return pod


def test_every_rendered_nodeset_pod_is_admitted_in_the_slurm_namespace():
    stack = rendered("gke-h100-512")
    objects = k8s_objects(recording("gke-h100-512"))
    nodesets = [o for o in stack.objects if o["kind"] == "NodeSet"]
    assert len(nodesets) == 2
    annotated = 0
    for nodeset in nodesets:
        pod = _nodeset_pod(nodeset)
        annotated += any(k.startswith("devices.gke.io") for k in pod["metadata"].get("annotations") or {})
        assert admission_failures(objects, pod, nodeset["metadata"]["namespace"]) == [], nodeset["metadata"]["name"]
    assert annotated == 1  # the TCPXO pool's NodeSet asks the injector for its GPUs; the L4 pool's does not


@pytest.mark.parametrize("stack", ["gke-h100-512", "gke-flex-start-tas", "gke-kueue"])
def test_every_pod_template_helm_renders_passes_the_device_policy(stack):
    objects = k8s_objects(recording(stack))
    policy = _policies(objects)[DEVICE_POLICY]
    checked = 0
    for obj in rendered(stack).objects:
        template = (obj.get("spec") or {}).get("template")
        if obj["kind"] in ("Deployment", "DaemonSet", "StatefulSet", "Job") and template:
            assert policy_failures(policy, pod_from_template(template), obj["metadata"].get("namespace") or "x") == []
            checked += 1
    assert checked >= 2
