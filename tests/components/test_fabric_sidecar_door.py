"""The RxDM sidecar is the one container of a GPUDirect-TCPX team namespace with NET_ADMIN and the host's /sys and
/proc/sys writable: the admission CEL (run by cel-python on the stack's recorded policies) exempts only the rendered
container, so no variant of it that runs a tenant's code inside it is admitted, and exec reaches it neither by name
nor by leaving the container out."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

from tests.support.kube.admission import admission_failures, fabric_case

TCPX_STACKS = ["gke-kueue", "gke-flex-start-tas", "fleet-gke"]
BINARY_DIR = "/tcpgpudmarxd/build/app"
EXACT = "gpu-cluster-fabric-pods: a container named tcpx-daemon must be the GPU fabric's sidecar exactly as rendered"


@pytest.fixture(scope="module", params=TCPX_STACKS)
def tcpx(request):
    objects, ns, pod = fabric_case(request.param)
    assert admission_failures(objects, pod, ns) == [], "the stack's own runtime pod must be admitted"
    return objects, ns, pod


def _sidecar(pod: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in pod["spec"]["initContainers"] if c["name"] == "tcpx-daemon")


def _probe(pod):
    _sidecar(pod)["startupProbe"] = {
        "exec": {"command": ["/bin/sh", "-c", "echo '|/tmp/x' > /hostprocsysfs/kernel/core_pattern"]}
    }


def _post_start(pod):
    _sidecar(pod)["lifecycle"] = {"postStart": {"exec": {"command": ["/bin/sh", "-c", "id"]}}}


def _ld_preload(pod):
    _sidecar(pod)["env"].append({"name": "LD_PRELOAD", "value": "/run/tcpx/evil.so"})


def _env_from(pod):
    _sidecar(pod)["envFrom"] = [{"configMapRef": {"name": "evil-env"}}]


def _config_map_over_binary(pod):
    pod["spec"]["volumes"].append({"name": "evil-bin", "configMap": {"name": "evil", "defaultMode": 0o755}})
    _sidecar(pod)["volumeMounts"].append({"name": "evil-bin", "mountPath": BINARY_DIR})


def _uid_zero(pod):
    _sidecar(pod)["securityContext"]["runAsUser"] = 0


def _libraries_from_a_config_map(pod):
    """Same volume name, another source: the sidecar's LD_LIBRARY_PATH would load the tenant's libraries."""
    libs = next(m["name"] for m in _sidecar(pod)["volumeMounts"] if m.get("readOnly"))
    pod["spec"]["volumes"] = [
        v if v["name"] != libs else {"name": libs, "configMap": {"name": "evil"}} for v in pod["spec"]["volumes"]
    ]


def _sub_path(pod):
    mount = next(m for m in _sidecar(pod)["volumeMounts"] if m["mountPath"] == "/hostprocsysfs")
    mount["subPath"] = "kernel"


def _args(pod):
    _sidecar(pod)["args"] = ["--setup_param", "x"]


def _working_dir(pod):
    _sidecar(pod)["workingDir"] = "/run/tcpx"


def _tty(pod):
    _sidecar(pod).update(stdin=True, tty=True)


VARIANTS: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("startupProbe exec", _probe),
    ("postStart exec", _post_start),
    ("LD_PRELOAD in env", _ld_preload),
    ("envFrom", _env_from),
    ("ConfigMap mounted over the binary", _config_map_over_binary),
    ("runAsUser 0", _uid_zero),
    ("library volume from a ConfigMap", _libraries_from_a_config_map),
    ("subPath into /proc/sys", _sub_path),
    ("args", _args),
    ("workingDir", _working_dir),
    ("stdin and tty", _tty),
]


@pytest.mark.parametrize("what, change", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_a_changed_sidecar_is_not_admitted(tcpx, what, change):
    objects, ns, pod = tcpx
    evil = copy.deepcopy(pod)
    change(evil)
    refusals = admission_failures(objects, evil, ns)
    assert any(r.startswith(EXACT) for r in refusals), refusals
    # and it is no longer exempt: its NET_ADMIN and host /sys are refused as for any other container
    assert any("capabilities beyond baseline" in r for r in refusals), refusals
    assert any("only the GPU fabric's sidecar may mount" in r for r in refusals), refusals


def test_an_ephemeral_container_may_not_target_the_sidecar(tcpx):
    objects, ns, pod = tcpx
    evil = copy.deepcopy(pod)
    evil["spec"]["ephemeralContainers"] = [
        {"name": "debug", "image": "busybox:1.37", "targetContainerName": "tcpx-daemon"}
    ]
    refusals = admission_failures(objects, evil, ns, "UPDATE", "pods/ephemeralcontainers")
    assert any("ephemeral containers may not target the GPU fabric's sidecar" in r for r in refusals), refusals


def test_a_pod_with_the_sidecar_may_not_share_its_process_namespace(tcpx):
    objects, ns, pod = tcpx
    evil = copy.deepcopy(pod)
    evil["spec"]["shareProcessNamespace"] = True
    assert any("may not share its process namespace" in r for r in admission_failures(objects, evil, ns))


@pytest.mark.parametrize(
    "options, admitted",
    [
        ({"command": ["sh"], "stdin": True, "tty": True}, False),  # kubectl exec without -c
        ({"container": "", "command": ["sh"]}, False),
        ({"container": "tcpx-daemon", "command": ["sh"]}, False),
        ({"container": "node", "command": ["sh"]}, True),
    ],
    ids=["no container", "empty container", "the sidecar", "the training container"],
)
def test_exec_must_name_a_container_other_than_the_sidecar(tcpx, options, admitted):
    objects, ns, pod = tcpx
    main = pod["spec"]["containers"][0]["name"]
    request = {"kind": "PodExecOptions", **{k: (main if v == "node" else v) for k, v in options.items()}}
    for resource in ("pods/exec", "pods/attach"):
        refusals = admission_failures(objects, request, ns, "CONNECT", resource)
        assert (refusals == []) == admitted, (resource, refusals)


@pytest.mark.parametrize(
    "context, admitted",
    [
        ({"runAsUser": 0}, False),
        ({"runAsGroup": 0}, False),
        ({"runAsGroup": 1000}, False),
        ({"supplementalGroups": [0]}, False),
        ({"fsGroup": 1000}, False),
        ({"runAsUser": 1000}, True),
        ({"runAsNonRoot": False}, True),
        ({}, True),
    ],
)
def test_pod_level_identity_that_reaches_the_sidecar_is_refused(tcpx, context, admitted):
    """A pod-level uid 0 or group applies to the sidecar too (NET_ADMIN, host /proc/sys); a non-zero uid only
    narrows it."""
    objects, ns, pod = tcpx
    pod = copy.deepcopy(pod)
    pod["spec"]["securityContext"] = context
    refused = admission_failures(objects, pod, ns)
    assert (refused == []) == admitted, refused
