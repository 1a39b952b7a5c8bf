"""Each DaemonSet gpu-cluster renders gets only the host namespaces its containers use (``HOST_ACCESS`` in
``render/gke_fabric_manifests.py``, with the upstream manifests' commit and the reason). Derived here from what the
rendered containers run, in every example stack: ``hostPID`` exactly when a command enters the host's PID 1
(``nsenter -t 1``), ``hostNetwork`` exactly when a command writes a host network sysctl (``/proc/sys/net``); no
other DaemonSet the program registers uses a host namespace at all."""

from __future__ import annotations

import functools
import json

import pytest

from preview.engine import PROJECT_ROOT, Recording, read_stack_file, run_program
from render.gke_fabric_manifests import HOST_ACCESS
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS

DAEMONSET = "kubernetes:apps/v1:DaemonSet"


@functools.cache
def _recording(stack: str) -> Recording:
    return run_program(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"), stack)


def _daemonsets(stack: str) -> list[dict]:
    out = []
    for r in _recording(stack).resources:
        if r.type == DAEMONSET:
            out.append({"name": r.inputs["metadata"]["name"], "spec": r.inputs["spec"]["template"]["spec"]})
    return out


def _commands(spec: dict) -> str:
    return json.dumps(
        [c.get("command", []) + c.get("args", []) for c in spec.get("initContainers", []) + spec["containers"]]
    )


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_host_namespaces_are_exactly_what_the_containers_use(stack):
    for ds in _daemonsets(stack):
        spec, commands = ds["spec"], _commands(ds["spec"])
        uses_pid = "nsenter" in commands and ('-at", "1' in commands or "-t 1" in commands or "-at 1" in commands)
        uses_net = "/proc/sys/net" in commands
        assert bool(spec.get("hostPID")) == uses_pid, f"{stack}: {ds['name']} hostPID vs its commands"
        assert bool(spec.get("hostNetwork")) == uses_net, f"{stack}: {ds['name']} hostNetwork vs its commands"
        assert not spec.get("hostIPC"), ds["name"]
        if spec.get("hostPID") or spec.get("hostNetwork"):
            network, pid, why = HOST_ACCESS[ds["name"]]
            assert (network, pid) == (bool(spec.get("hostNetwork")), bool(spec.get("hostPID"))) and why


def test_the_examples_render_every_installer_kind_so_the_check_has_teeth():
    seen = {ds["name"]: ds["spec"] for stack in EXAMPLE_STACKS for ds in _daemonsets(stack)}
    assert {"nccl-tcpx-installer", "nccl-tcpxo-installer", "nccl-rdma-installer", "device-injector"} <= set(seen)
    assert seen["nccl-tcpxo-installer"].get("hostPID") and not seen["nccl-tcpxo-installer"].get("hostNetwork")
    assert seen["nccl-rdma-installer"].get("hostNetwork") and not seen["nccl-rdma-installer"].get("hostPID")
    for name in ("nccl-tcpx-installer", "device-injector"):
        assert not {"hostPID", "hostNetwork"} & set(seen[name]), name
