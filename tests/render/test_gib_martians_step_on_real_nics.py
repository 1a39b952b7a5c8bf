"""The gIB installer's disable-log-martians step names exactly the RDMA NICs the machine has (8 on A3 Ultra and A4),
and A4X's installer has none, as upstream's A4X installers: run by a real ``sh`` against a fake procfs, the step
succeeds on 8 NICs and the old 8-NIC step fails at the 5th NIC of a 4-NIC node (the init container crash-looped and
the plugin was never installed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from render.gke_fabric_manifests import MARTIANS_STEP, martians_command
from tests.support.helm.examples import recording
from tests.support.preview.recorded import of_type

DAEMONSET = "kubernetes:apps/v1:DaemonSet"
SH = shutil.which("sh")


def _step(stack: str, daemonset: str) -> str:
    (ds,) = [r for r in of_type(recording(stack), DAEMONSET) if r.inputs["metadata"]["name"] == daemonset]
    (step,) = [c for c in ds.inputs["spec"]["template"]["spec"]["initContainers"] if c["name"] == MARTIANS_STEP]
    assert step["command"][:2] == ["/bin/sh", "-c"]
    return step["command"][2]


def _fake_procfs(root: Path, nics: int) -> Path:
    for i in range(nics):
        conf = root / "proc/sys/net/ipv4/conf" / f"gpu{i}rdma0"
        conf.mkdir(parents=True)
        (conf / "log_martians").write_text("1\n")
    return root


def _run(command: str, root: Path) -> subprocess.CompletedProcess:
    assert SH is not None
    # the same script, with /proc pointed at the fake tree
    return subprocess.run(
        [SH, "-c", command.replace("/proc/", f"{root}/proc/")], capture_output=True, text=True, timeout=30
    )


def test_the_a4x_installer_has_no_martians_step_as_upstreams():
    (ds,) = [
        r
        for r in of_type(recording("gke-a4x-nvl72"), DAEMONSET)
        if r.inputs["metadata"]["name"] == "nccl-rdma-installer-arm64"
    ]
    names = [c["name"] for c in ds.inputs["spec"]["template"]["spec"]["initContainers"]]
    assert "nccl-rdma-installer" in names and MARTIANS_STEP not in names


@pytest.mark.skipif(SH is None, reason="no sh on PATH")
def test_the_a3_ultra_step_runs_clean_on_a_node_with_8_rdma_nics(tmp_path):
    root = _fake_procfs(tmp_path, 8)
    done = _run(_step("gke-a3-ultra-rdma", "nccl-rdma-installer"), root)
    assert done.returncode == 0, done.stderr
    assert [(root / f"proc/sys/net/ipv4/conf/gpu{i}rdma0/log_martians").read_text().strip() for i in range(8)] == [
        "0"
    ] * 8


@pytest.mark.skipif(SH is None, reason="no sh on PATH")
def test_an_8_nic_step_fails_on_a_4_nic_node(tmp_path):
    # what the installer rendered for every machine before it followed the machine's NIC count
    done = _run(martians_command(8), _fake_procfs(tmp_path, 4))
    assert done.returncode != 0 and "gpu4rdma0" in done.stderr


def test_a3_ultra_keeps_its_8_nics():
    command = _step("gke-a3-ultra-rdma", "nccl-rdma-installer")
    assert [f"gpu{i}rdma0" in command for i in range(9)] == [True] * 8 + [False]
