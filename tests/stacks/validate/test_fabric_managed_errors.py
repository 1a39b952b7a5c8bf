"""GKE-managed fabric mode and the GKE version floor: each row pins the exact message a user reads. Managed
accelerator networking only on the catalog's RDMA machines; ``cluster.minMasterVersion`` below the fabric's floor is
refused, a version whose patch GKE picks is a warning, and the field is GKE-only and for created clusters."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from tests.support.spec.edit import edit, edits
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

GKE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-east4",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
    "nodePools": [
        {"name": "mega", "machineType": "a3-megagpu-8g", "zones": ["us-east4-a"], "maxNodes": 4, "multiNode": True}
    ],
}
ULTRA = edit(
    GKE,
    "nodePools[0]",
    {
        "name": "h200",
        "machineType": "a3-ultragpu-8g",
        "zones": ["us-east4-b"],
        "maxNodes": 4,
        "multiNode": True,
        "fabric": {"mode": "managed"},
    },
)
EKS: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {
        "name": "ml-train",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [
        {"name": "p5", "machineType": "p5.48xlarge", "zones": ["us-east-1a"], "maxNodes": 4, "multiNode": True}
    ],
}


def case(config: dict[str, Any], expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(config, textwrap.dedent(expected).strip("\n"), id=id)


ERRORS = [
    case(
        edit(GKE, "nodePools[0].fabric", {"mode": "managed"}),
        """
        error: gpu-cluster:nodePools[0].fabric.mode: pool 'mega': GKE manages accelerator networking only on RDMA machines, not GPUDirect-TCPXO on a3-megagpu-8g
          received: 'managed'
          allowed:  mode managed on a3-ultragpu-8g, a4-highgpu-8g; elsewhere auto, existing or off
          fix:      set fabric.mode: auto (gpu-cluster creates the networks), or pick an RDMA machine type""",
        id="managed-on-tcpxo",
    ),
    case(
        edits(
            GKE,
            {
                "nodePools[0].machineType": "g2-standard-24",
                "nodePools[0].multiNode": False,
                "nodePools[0].fabric": {"mode": "managed"},
            },
        ),
        """
        error: gpu-cluster:nodePools[0].fabric.mode: pool 'mega': GKE manages accelerator networking only on RDMA machines, not g2-standard-24 (no fabric)
          received: 'managed'
          allowed:  mode managed on a3-ultragpu-8g, a4-highgpu-8g; elsewhere auto, existing or off
          fix:      set fabric.mode: auto (gpu-cluster creates the networks), or pick an RDMA machine type""",
        id="managed-without-fabric",
    ),
    case(
        edit(EKS, "nodePools[0].fabric", {"mode": "managed"}),
        """
        error: gpu-cluster:nodePools[0].fabric.mode: pool 'p5': managed accelerator networking is a GKE setting: EKS pools carry EFA interfaces on their own subnets
          received: 'managed'
          allowed:  auto, off
          fix:      set fabric.mode: auto (every EFA interface, on the pool's subnets) or off""",
        id="managed-on-eks",
    ),
    case(
        edit(ULTRA, "nodePools[0].fabric.networks", [{"network": "a", "subnetwork": "b"}]),
        """
        error: gpu-cluster:nodePools[0].fabric.networks: pool 'h200': networks are only read with fabric mode existing
          received: ["a/b"]
          allowed:  an empty list with mode managed (GKE creates the networks)
          fix:      set fabric.mode: existing to attach these networks, or remove networks""",
        id="managed-with-networks",
    ),
    case(
        edit(ULTRA, "nodePools", [*ULTRA["nodePools"], GKE["nodePools"][0]]),
        """
        error: gpu-cluster:nodePools[0].fabric.mode: pool 'h200': GKE managed DRANET cannot share a cluster with multi-network Device networks (GKE's DRANET guide: both manage the same NICs), and pool 'mega' attaches such networks
          received: 'managed'
          allowed:  every fabric pool of the cluster in mode managed, or none
          fix:      set this pool's fabric.mode: auto, or move pool 'mega' to mode managed (RDMA machines), off, or another cluster""",
        id="managed-next-to-attached-networks",
    ),
    case(
        edit(GKE, "cluster.minMasterVersion", "1.31.1-gke.1000000"),
        """
        error: gpu-cluster:cluster.minMasterVersion: 1.31.1-gke.1000000 is below the GKE version GPUDirect-TCPXO on pool 'mega' (a3-megagpu-8g) needs
          received: '1.31.1-gke.1000000'
          allowed:  1.31.1-gke.2008000 for GKE 1.31 or later (source: GoogleCloudPlatform/cluster-toolkit@03c47e74 modules/compute/gke-node-pool/gpu_direct.tf major_minor_version_acceptable_map (a3-megagpu-8g))
          fix:      set cluster.minMasterVersion to 1.31.1-gke.2008000 or later (a version of release channel REGULAR)""",
        id="below-tcpxo-floor",
    ),
    case(
        edit(ULTRA, "cluster.minMasterVersion", "1.33.5-gke.1080000"),
        """
        error: gpu-cluster:cluster.minMasterVersion: 1.33.5-gke.1080000 is below the GKE version GPUDirect RDMA (RoCE) (GKE-managed networking) on pool 'h200' (a3-ultragpu-8g) needs
          received: '1.33.5-gke.1080000'
          allowed:  1.34.1-gke.1829001 for GKE 1.34 or later (source: GKE managed DRANET / accelerator_network_profile auto floor: cluster-toolkit gpu_direct.tf dranet_min_version; docs.cloud.google.com/kubernetes-engine/docs/how-to/allocate-network-resources-dra (shared facts A.1))
          fix:      set cluster.minMasterVersion to 1.34.1-gke.1829001 or later (a version of release channel REGULAR)""",
        id="below-managed-floor",
    ),
    case(
        edit(GKE, "cluster.minMasterVersion", "1.32-latest"),
        """
        error: gpu-cluster:cluster.minMasterVersion: not a GKE version
          received: '1.32-latest'
          allowed:  latest, a minor (1.33), minor and patch (1.33.5) or a full GKE version (1.33.5-gke.1080000)
          fix:      write the version as `gcloud container get-server-config` lists it, e.g. 1.33.5-gke.1080000""",
        id="not-a-version",
    ),
    case(
        edits(GKE, {"cluster.minMasterVersion": "1.33", "cluster.mode": "existing"}),
        """
        error: gpu-cluster:cluster.minMasterVersion: minMasterVersion sets the version of a cluster gpu-cluster creates; this cluster is mode existing
          received: '1.33'
          allowed:  unset with mode existing
          fix:      remove cluster.minMasterVersion (upgrade the existing cluster with gcloud or its own program)""",
        id="existing-cluster",
    ),
    case(
        edit(EKS, "cluster.minMasterVersion", "1.33"),
        """
        error: gpu-cluster:cluster.minMasterVersion: minMasterVersion is a GKE setting; this stack's cloud is aws
          received: '1.33'
          fix:      remove cluster.minMasterVersion""",
        id="gke-only",
    ),
]


@pytest.mark.parametrize("config,expected", ERRORS)
def test_bad_managed_or_version_settings_are_refused_with_the_exact_message(config, expected):
    with pytest.raises(SpecError) as exc:
        load_spec(config)
    assert [str(i) for i in exc.value.errors] == [expected]


def test_managed_rdma_pool_loads_without_warnings_now_that_jobs_claim_its_nics():
    spec, warnings = load_spec(ULTRA)
    assert spec.node_pools[0].fabric is not None and spec.node_pools[0].fabric.mode.value == "managed"
    assert warnings == []


def test_two_managed_pools_share_a_cluster():
    second = {
        "name": "h200-b",
        "machineType": "a3-ultragpu-8g",
        "zones": ["us-east4-b"],
        "maxNodes": 2,
        "multiNode": True,
        "fabric": {"mode": "managed"},
    }
    assert load_spec(edit(ULTRA, "nodePools", [*ULTRA["nodePools"], second]))[1] == []


def test_a_version_gke_completes_itself_is_a_warning_not_an_error():
    _, warnings = load_spec(edit(GKE, "cluster.minMasterVersion", "1.32"))
    assert [str(w) for w in warnings] == [
        textwrap.dedent("""\
        warning: gpu-cluster:cluster.minMasterVersion: 1.32 leaves the patch to GKE, so gpu-cluster cannot tell whether it meets the version GPUDirect-TCPXO on pool 'mega' (a3-megagpu-8g) needs
          received: '1.32'
          allowed:  1.32.11-gke.1174000 for GKE 1.32 or later
          fix:      pin a full version, e.g. 1.32.11-gke.1174000""")
    ]


@pytest.mark.parametrize("version", ["1.32.11-gke.1174000", "1.32.12", "1.33", "latest", "1.35.1-gke.100"])
def test_versions_at_or_above_the_floor_pass_silently(version):
    assert load_spec(edit(GKE, "cluster.minMasterVersion", version))[1] == []


def test_pools_without_a_fabric_are_not_held_to_a_floor():
    cfg = edits(GKE, {"cluster.minMasterVersion": "1.27.1-gke.1", "nodePools[0].fabric": {"mode": "off"}})
    assert [w.path for w in load_spec(cfg)[1]] == ["gpu-cluster:nodePools[0].fabric.mode"]  # the bandwidth warning only
