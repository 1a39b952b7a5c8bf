"""The fabric tables: every fabric-capable machine has a row, with a source; images pinned; RxDM pairs with its
NCCL plugin; GKE version floors parse."""

from __future__ import annotations

import re

import pytest

from catalog import Cloud, GpuDirect, load_catalog
from catalog.fabric import FabricKind, load_fabric_catalog

CAT = load_catalog()
FAB = load_fabric_catalog()
HGX_GPUS = 8
KIND_OF = {
    GpuDirect.TCPX: FabricKind.TCPX,
    GpuDirect.TCPXO: FabricKind.TCPXO,
    GpuDirect.RDMA: FabricKind.RDMA,
    GpuDirect.EFA_RDMA: FabricKind.EFA,
}
FABRIC_CAPABLE = sorted(
    (
        k
        for k, m in CAT.machines.items()
        if m.gpudirect != GpuDirect.NONE and (m.gpus >= HGX_GPUS or CAT.nvlink_domain(m) is not None)
    ),  # HGX or GB200 racks
    key=lambda k: (k[0].value, k[1]),
)


@pytest.mark.parametrize("key", FABRIC_CAPABLE, ids=lambda k: k[1])
def test_every_fabric_capable_machine_has_a_sourced_row(key):
    machine, fabric = CAT.machines[key], FAB.for_machine(*key)
    assert fabric is not None, f"{key[1]} has a GPUDirect/EFA fabric but no row in catalog/data/fabrics.csv"
    assert fabric.kind == KIND_OF[machine.gpudirect]
    assert fabric.source.strip() and fabric.bandwidth_source.strip() and fabric.nccl_transport.strip()
    assert fabric.nominal_gbps_per_node > 0 and fabric.gpu_nics > 0


def test_rows_are_only_fabric_capable_machines():
    assert sorted(FAB.machines, key=lambda k: (k[0].value, k[1])) == FABRIC_CAPABLE


def test_network_counts_per_fabric_follow_the_gke_guides():
    counts = {
        m.machine_type: (m.gvnic_networks, m.rdma_networks) for m in FAB.machines.values() if m.cloud == Cloud.GCP
    }
    assert counts == {
        "a3-highgpu-8g": (4, 0),
        "a3-megagpu-8g": (8, 0),
        "a3-ultragpu-8g": (1, 8),
        "a4-highgpu-8g": (1, 8),
        "a4x-highgpu-4g": (1, 4),
    }  # A4X: gvnic-1 + rdma-0..3


def test_efa_nic_count_is_the_machine_fact_not_a_second_copy():
    for (cloud, name), fabric in FAB.machines.items():
        if cloud == Cloud.AWS:
            assert fabric.gpu_nics == CAT.machines[(cloud, name)].efa_interfaces
    assert FAB.for_machine(Cloud.AWS, "p5.48xlarge").gpu_nics == 32


PINNED = re.compile(
    r"^(v?\d+(\.\d+)*(-\d+)?(@sha256:[0-9a-f]{64})?|sha256:[0-9a-f]{64}"
    r"|\d+\.\d+\.\d+-gpu-py\d+-cu\d+-ubuntu\d+\.\d+-ec2)$"
)
"""Exact tags or digests; the last form is an AWS Deep Learning Container's full version tag (framework, Python, CUDA,
OS; no registry access here to resolve its digest)."""


@pytest.mark.parametrize(
    "key", sorted(FAB.images, key=lambda k: (k[0].value, k[1])), ids=lambda k: f"{k[0].value}-{k[1]}"
)
def test_every_image_is_an_exact_tag_or_digest(key):
    image = FAB.images[key]
    assert PINNED.match(image.version), f"{image.image}: '{image.version}' is not an exact tag or digest"
    assert "latest" not in image.reference and image.source.strip()


@pytest.mark.parametrize("kind", [FabricKind.TCPX, FabricKind.TCPXO])
def test_rxdm_and_nccl_plugin_versions_pair(kind):
    assert FAB.pairing_ok(kind)
    assert FAB.image(kind, "rxdm").pairs_with == FAB.image(kind, "nccl-plugin").version


@pytest.mark.parametrize(
    "kind, managed", [(FabricKind.TCPX, False), (FabricKind.TCPXO, False), (FabricKind.RDMA, True)]
)
def test_gke_version_floors_are_gke_versions_of_their_minor(kind, managed):
    floors = FAB.version_floors(kind, managed)
    assert floors, kind
    for f in floors:
        assert re.match(rf"^{re.escape(f.minor)}\.\d+-gke\.\d+$", f.min_version), f
        assert f.source.strip() and f.managed == managed


def test_local_ssd_rows_are_sourced_catalog_machines():
    from catalog.storage import load_local_ssds

    ssds = load_local_ssds()
    assert {m for (c, m) in ssds if c == Cloud.GCP} == {"a3-highgpu-8g", "a3-megagpu-8g"}
    for key, row in ssds.items():
        assert key in CAT.machines and row.source.strip()
        expected = (16, 6000) if key[0] == Cloud.GCP else (8, row.gib_each * 8)
        if key == (Cloud.AWS, "p6e-gb200.36xlarge"):
            expected = (3, 3 * 6984)  # 3 x 7.5 TB (the EKS UltraServer guide)
        assert (row.count, row.total_gib) == expected
    assert {m for (c, m) in ssds if c == Cloud.AWS} == {
        m for (c, m), fabric in FAB.machines.items() if c == Cloud.AWS
    }, "every EFA machine has NVMe instance store"


def test_gke_managed_networking_is_offered_on_the_rdma_machines_only():
    managed = {m: f.gke_managed_profile for (c, m), f in FAB.machines.items() if f.gke_managed_profile}
    assert managed == {"a3-ultragpu-8g": "auto", "a4-highgpu-8g": "auto"}
    assert FAB.version_floors(FabricKind.RDMA, managed=True)[0].min_version == "1.34.1-gke.1829001"
    assert FAB.version_floors(FabricKind.RDMA) == [], "no sourced floor for RDMA over networks gpu-cluster attaches"


def test_every_managed_profile_names_the_device_class_its_pods_claim():
    """GKE managed DRANET: the NICs reach a pod only through a claim on this DeviceClass (GKE's DRANET guide)."""
    classes = {m: f.gke_dra_device_class for (c, m), f in FAB.machines.items() if f.gke_dra_device_class}
    assert classes == {"a3-ultragpu-8g": "mrdma.google.com", "a4-highgpu-8g": "mrdma.google.com"}
    assert all(bool(f.gke_managed_profile) == bool(f.gke_dra_device_class) for f in FAB.machines.values())
