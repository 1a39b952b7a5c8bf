"""A fabric job cannot start before the NCCL plugin is on its node: the installer DaemonSet's last step writes the
plugin's reference to a marker on the node, and the job pod's first init container (before RxDM and the job) waits
until the marker names the plugin the catalog pins. Both shell commands are the rendered ones, run with a real
``/bin/sh`` against a temporary directory standing in for the node's ``/home/kubernetes/bin/gpu-cluster``: the gate
keeps waiting with no marker or another plugin version, and finishes once the installer's command has run."""

from __future__ import annotations

import subprocess
import time

import pytest

from catalog.fabric import FabricKind, load_fabric_catalog
from render.gke_fabric_manifests import installer
from render.fabric_pod import pod_fabric
from render.fabric_ready_gate import READY_DIR, READY_DIR_HOST
from tests.support.spec.scheduling_fixtures import spec_and_facts
from tests.render.test_fabric_workloads import FABRICS

FAB = load_fabric_catalog()
KINDS = {"tcpx": FabricKind.TCPX, "tcpxo": FabricKind.TCPXO, "rdma": FabricKind.RDMA}


def _gate(fabric: str) -> dict:
    _, facts = spec_and_facts(FABRICS[fabric])
    made = pod_fabric(facts[0])
    assert made is not None
    (gate,) = made.init
    volume = next(v for v in made.volumes if v["name"] == gate["volumeMounts"][0]["name"])
    assert volume["hostPath"]["path"] == READY_DIR_HOST and gate["volumeMounts"][0]["readOnly"] is True
    return gate


def _marker_step(kind: FabricKind) -> str:
    ds = installer(kind, ["pool"], FAB, rdma_nics=8)
    install = ds["spec"]["template"]["spec"]["initContainers"][-1]
    volumes = {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}
    mount = next(m for m in install["volumeMounts"] if m["mountPath"] == READY_DIR)
    assert volumes[mount["name"]]["hostPath"]["path"] == READY_DIR_HOST
    return install["command"][-1].rsplit("; ", 1)[-1]  # the last step, after the plugin was copied


@pytest.mark.parametrize("fabric", sorted(KINDS))
def test_the_gate_waits_until_the_installer_wrote_the_pinned_plugin(fabric, tmp_path):
    gate, marker = _gate(fabric)["command"][-1], _marker_step(KINDS[fabric])
    assert marker.startswith("mkdir -p /run/gpu-cluster")
    on_node = str(tmp_path / "gpu-cluster")
    run = gate.replace(READY_DIR, on_node).replace("sleep 5", "sleep 0.05")
    waiting = subprocess.Popen(["/bin/sh", "-c", run], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        assert waiting.poll() is None, "started with no marker"
        (tmp_path / "gpu-cluster").mkdir()
        (tmp_path / "gpu-cluster" / "nccl-plugin-ready").write_text("some-other-plugin:v0\n")
        time.sleep(0.3)
        assert waiting.poll() is None, "started with another plugin's marker"
        subprocess.run(["/bin/sh", "-c", marker.replace(READY_DIR, on_node)], check=True)
        assert waiting.wait(timeout=5) == 0
    finally:
        waiting.kill()
    written = (tmp_path / "gpu-cluster" / "nccl-plugin-ready").read_text()
    assert FAB.image(KINDS[fabric], "nccl-plugin").reference in written
