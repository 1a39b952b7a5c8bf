"""The fabric in the offline preview: gke-h100-512 shows 8 TCPXO networks, the installer and injector, a wired
Slinky NodeSet and no GPUDirect warning; a multi-node A3 pool with the fabric off exits 1 (mandatory violation);
an EKS p5 runtime requests 32 EFA devices; the cost notes say the fabric costs nothing per hour."""

from __future__ import annotations

import pytest

from preview.render.text import render_text
from preview.run import preview_config, preview_stack
from tests.support.spec.edit import edits
from tests.support.spec.stack_configs import GKE

RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"


@pytest.fixture(scope="module")
def h100():
    return preview_stack("gke-h100-512")


def test_h100_512_shows_tcpxo_with_eight_networks_installer_injector_and_wired_nodeset(h100):
    assert h100.exit_code == 0
    mega = {f["pool"]: f for f in h100.as_dict()["fabric"]}["h100-mega"]
    assert (mega["fabric"], mega["status"], mega["networkCount"], mega["nicsPerNode"]) == ("tcpxo", "auto", 8, 8)
    assert mega["networks"] == [f"vpc{i}" for i in range(1, 9)] and mega["createdByGpuCluster"] is True
    assert mega["daemonSets"] == ["device-injector", "nccl-tcpxo-installer"]
    assert mega["wired"] == ["Slinky NodeSet h100-mega"]
    assert mega["nominalGbpsPerNode"] == 1600 and "gpu-network-bandwidth" in mega["bandwidthSource"]
    assert "TCPXO" in mega["ncclTransport"]
    assert {f["pool"]: f["fabric"] for f in h100.as_dict()["fabric"]}["l4-eval"] is None


def test_h100_512_has_no_gpudirect_warning_and_says_the_fabric_is_free(h100):
    assert not [w for w in h100.warnings if "GPUDirect" in w.problem or "primary NIC" in w.problem]
    assert any("cost nothing per hour" in n for n in h100.cost.notes)
    text = render_text(h100, color=False, width=200)
    assert "GPU fabric" in text and "vpc1…vpc8 (8)" in text and "nccl-tcpxo-installer" in text


def test_a_multi_node_a3_pool_with_the_fabric_off_is_a_mandatory_violation():
    report = preview_config("t", edits(GKE, {"nodePools[0].fabric": {"mode": "off"}}))
    assert report.exit_code == 1
    assert [(v["policy"], v["enforcement"]) for v in report.violations] == [("topology-fabric-missing", "mandatory")]
    assert {f["pool"]: f["status"] for f in report.fabric} == {"h100": "off"}


def test_eks_p5_runtime_requests_32_efa_devices():
    report = preview_stack("eks-kueue")
    runtime = next(r for r in report.resources if r.type == RUNTIME and r.inputs["metadata"]["name"] == "torch-p5")
    template = runtime.inputs["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    resources = template["spec"]["containers"][0]["resources"]
    assert resources["requests"]["vpc.amazonaws.com/efa"] == 32 == resources["limits"]["vpc.amazonaws.com/efa"]
    p5 = {f["pool"]: f for f in report.as_dict()["fabric"]}["p5"]
    assert (p5["fabric"], p5["nicsPerNode"], p5["wired"]) == ("efa", 32, ["ClusterTrainingRuntime torch-p5"])


def test_rdma_example_shows_gib_on_nine_networks_and_a_roce_vpc_in_the_pools_zone():
    report = preview_stack("gke-a3-ultra-rdma")
    assert report.exit_code == 0
    h200 = {f["pool"]: f for f in report.as_dict()["fabric"]}["h200"]
    assert (h200["fabric"], h200["networkCount"]) == ("rdma", 9)
    assert h200["networks"] == ["gvnic-1", *(f"rdma-{i}" for i in range(8))]
    assert h200["daemonSets"] == ["nccl-rdma-installer"] and h200["wired"] == ["ClusterTrainingRuntime torch-h200"]
    roce = [r for r in report.resources if r.type == "gcp:compute/network:Network" and r.name.endswith("-roce")]
    assert [r.inputs["networkProfile"] for r in roce] == [
        "projects/ml-research-prod/global/networkProfiles/us-east4-b-vpc-roce"
    ]


def test_an_existing_cluster_is_told_to_have_multi_networking_on():
    report = preview_config("t", edits(GKE, {"cluster.mode": "existing"}))
    assert [w.problem for w in report.warnings if w.path == "gpu-cluster:nodePools[0].fabric"] == [
        "pool 'h100' attaches GPUDirect-TCPX networks to the existing cluster 'ml', which gpu-cluster does not "
        "modify: multi-networking (enable_multi_networking, Dataplane V2) must already be on"
    ]


def test_each_workloads_image_says_how_it_is_pinned(h100):
    """The slurmd image of gke-h100-512 is Slinky's tag, resolved to its digest at deploy (no public source pins it;
    offline the preview says so and shows no digest); the built slurmd-efa image of eks-p6e-gb200 is a digest."""
    slinky = next(c for f in h100.as_dict()["fabric"] for c in f.get("contract") or [])
    assert slinky["image"] == "ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04"
    assert slinky["imagePin"] == "digest resolved from ghcr.io at deploy"
    text = render_text(h100, color=False, width=400)
    assert f"image {slinky['image']} (pinned by digest resolved from ghcr.io at deploy)" in text
    gb200 = preview_stack("eks-p6e-gb200")
    assert gb200.exit_code == 0
    built = next(c for f in gb200.as_dict()["fabric"] for c in f.get("contract") or [])
    assert built["imagePin"] == "digest" and built["summary"] == "contract: 6/6 requirements met"
    assert "(pinned by digest)" in render_text(gb200, color=False, width=400)


def test_the_fabric_section_reads_the_recording_once_not_once_per_pool(monkeypatch):
    """Many fabric pools: the workloads' views of the recorded resources are built once for the whole section (a
    pass per pool grew with pools x resources), and every fabric pool still gets its installer DaemonSets."""
    import preview.fabric_summary as fabric_summary
    from bench.synthetic import synthetic_gke_config

    built: list[int] = []
    real = fabric_summary.workload_views

    def counting(objects):
        built.append(1)
        return real(objects)

    monkeypatch.setattr(fabric_summary, "workload_views", counting)
    report = preview_config("synthetic-24", synthetic_gke_config(24))
    fabric = [f for f in report.as_dict()["fabric"] if f["fabric"] is not None]
    assert len(fabric) >= 3 and all(f["daemonSets"] for f in fabric), fabric
    assert len(built) == 1
