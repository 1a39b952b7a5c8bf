"""Whether the fabric images' entry scripts need ``chmod 755`` first, settled from upstream's manifests of each pinned
release (``catalog/data/fabric-entrypoints.csv``, repo@commit per row): container-engine-accelerators' TCPXO
installer (v1.0.14) and RxDM (v1.0.20) manifests chmod their scripts before running them; the TCPX (v3.1.9) and gIB
(v1.1.0) installers run theirs directly. The rendered installer DaemonSets and the RxDM sidecar must do exactly that:
a missing chmod on an image that ships the script without its exec bit fails the installer, and every fabric job then
waits at its ready gate."""

from __future__ import annotations

import re

import pytest

from catalog.fabric import FabricKind, load_fabric_catalog
from render.gke_fabric_manifests import installer
from render.fabric_pod import SIDECAR, pod_fabric
from tests.support.spec.scheduling_fixtures import spec_and_facts
from tests.support.spec.edit import edit
from tests.support.spec.scheduling_fixtures import GKE_TEAMS

FAB = load_fabric_catalog()


@pytest.mark.parametrize("kind,component", sorted(FAB.entrypoints, key=str))
def test_every_row_is_read_for_the_pinned_version_at_a_commit(kind, component):
    row = FAB.entrypoint(kind, component)
    assert row.version == FAB.image(kind, component).version, "re-read upstream when the pin moves"
    assert re.search(r"container-engine-accelerators@[0-9a-f]{8} ", row.source)
    assert row.script.startswith("/") and row.script.endswith(".sh")


def _installer_command(kind: FabricKind) -> str:
    ds = installer(kind, ["pool"], FAB, rdma_nics=8)
    init = ds["spec"]["template"]["spec"]["initContainers"]
    return next(c for c in init if c["image"] == FAB.image(kind, "nccl-plugin").reference)["command"][2]


@pytest.mark.parametrize("kind,chmod", [(FabricKind.TCPX, False), (FabricKind.TCPXO, True), (FabricKind.RDMA, False)])
def test_installers_chmod_their_entry_script_exactly_where_upstream_does(kind, chmod):
    command = _installer_command(kind)
    entry = "/scripts/container_entry.sh install --install-nccl"
    assert f"; {entry};" in command
    assert ("chmod 755 /scripts/container_entry.sh; " + entry in command) == chmod
    assert ("chmod" in command.split(entry)[0]) == chmod  # nothing else chmods it before it runs


def test_the_tcpxo_rxdm_sidecar_chmods_then_execs_the_entry_script_with_upstreams_flags():
    raw = edit(GKE_TEAMS, "nodePools[0].machineType", "a3-megagpu-8g")
    _, facts = spec_and_facts(raw)
    sidecar = next(s for s in pod_fabric(facts[0]).sidecars if s["name"] == SIDECAR[FabricKind.TCPXO])
    assert sidecar["command"] == [
        "/bin/sh",
        "-c",
        "chmod 755 /fts/entrypoint_rxdm_container.sh && exec "
        "/fts/entrypoint_rxdm_container.sh --num_hops=2 --num_nics=8",
    ]
    assert FAB.entrypoint(FabricKind.TCPXO, "rxdm").chmod
