"""cross-layer-rxdm-pairing: gke-h100-512 (TCPXO installer v1.0.14, NodeSet RxDM v1.0.20) passes; a NodeSet whose
RxDM is another release is a mandatory violation; a waiver silences it."""

from __future__ import annotations

import copy

import pytest

from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from tests.support.policy.harness import Pack, with_props, wire

ID = "cross-layer-rxdm-pairing"
RXDM = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


@pytest.fixture(scope="module")
def recorded():
    return tuple(run_program(read_stack_file(PROJECT_ROOT / "Pulumi.gke-h100-512.yaml"), "gke-h100-512").resources)


def _with_rxdm(resources, tag):
    out = [copy.deepcopy(r) for r in resources]
    (release,) = [r for r in out if r.type == "kubernetes:helm.sh/v3:Release" and r.name == "slurm-slurm"]
    props = wire(release)
    (rxdm,) = [
        c for c in props["values"]["nodesets"]["h100-mega"]["podSpec"]["initContainers"] if c["name"] == "tcpxo-daemon"
    ]  # after the fabric-ready gate
    rxdm["image"] = f"{RXDM}:{tag}"
    return [with_props(r, props) if r is release else r for r in out]


def _ours(diags):
    return [d for d in diags if d[0] == ID]


def test_the_catalog_pair_passes(pack, recorded):
    assert _ours(pack.stack(list(copy.deepcopy(recorded)))) == []


def test_another_rxdm_release_is_a_violation(pack, recorded):
    assert _ours(pack.stack(_with_rxdm(recorded, "v1.0.18"))) == [
        (
            ID,
            "mandatory",
            (
                "Slurm NodeSet 'h100-mega': its RxDM sidecar is not the release paired with the GPUDirect-TCPXO NCCL plugin "
                "the installer puts on the nodes, so NCCL fails at init or runs degraded"
                " · observed: RxDM v1.0.18 in container tcpxo-daemon, NCCL plugin v1.0.14 on the nodes"
                " · required: RxDM v1.0.20, released with plugin v1.0.14\n"
                f"Fix: set the tcpxo-daemon image to {RXDM}:v1.0.20 (gpu-cluster renders the pair from "
                "catalog/data/fabric-images.csv)"
            ),
        )
    ]


def test_a_waiver_silences_it(pack, recorded):
    pack.configure({ID: {"waivers": [{"rule": ID, "resource": "h100-mega", "reason": "testing RxDM v1.0.18 fix"}]}})
    try:
        assert _ours(pack.stack(_with_rxdm(recorded, "v1.0.18"))) == []
    finally:
        pack.configure()
