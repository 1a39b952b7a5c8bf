"""cross-layer-fabric-contract: the recorded flagship gke-h100-512 (Slurm on TCPXO) and eks-kueue (Kubeflow on EFA)
pass; the same stacks with the TaskProlog line gone from slurm.conf (the Slurm tasks then have the submitter's env
only: the state before the fix), or with an EKS runtime image that lacks aws-ofi-nccl, are mandatory violations that
name each requirement NCCL falls back to TCP without; a waiver silences them."""

from __future__ import annotations

import copy

import pytest

from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from tests.support.policy.harness import Pack, with_props, wire

ID = "cross-layer-fabric-contract"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def _record(stack: str):
    return tuple(run_program(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"), stack).resources)


@pytest.fixture(scope="module")
def slurm():
    return _record("gke-h100-512")


@pytest.fixture(scope="module")
def efa():
    return _record("eks-kueue")


def _ours(diags):
    return [d for d in diags if d[0] == ID]


def _without_task_prolog(resources):
    out = [copy.deepcopy(r) for r in resources]
    (release,) = [r for r in out if r.type == RELEASE and "nodesets" in (r.inputs.get("values") or {})]
    props = wire(release)
    conf = props["values"]["controller"]["extraConf"]
    assert "TaskProlog=" in conf
    props["values"]["controller"]["extraConf"] = "\n".join(
        line for line in conf.split("\n") if not line.startswith("TaskProlog=")
    )
    return [with_props(r, props) if r is release else r for r in out]


def _with_image(resources, image):
    out = [copy.deepcopy(r) for r in resources]
    (runtime,) = [r for r in out if r.type == RUNTIME and r.inputs["metadata"]["name"] == "torch-p5"]
    props = wire(runtime)
    props["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0][
        "image"
    ] = image
    return [with_props(r, props) if r is runtime else r for r in out]


def test_the_rendered_examples_pass(pack, slurm, efa):
    assert _ours(pack.stack(list(copy.deepcopy(slurm)))) == []
    assert _ours(pack.stack(list(copy.deepcopy(efa)))) == []


def test_slurm_tasks_without_the_task_prolog_fall_back_to_tcp(pack, slurm):
    found = _ours(pack.stack(_without_task_prolog(slurm)))
    assert [(d[0], d[1]) for d in found] == [(ID, "mandatory")] * 2
    first, second = (d[2] for d in found)
    assert first.startswith(
        "Slinky NodeSet h100-mega: its training process on pool 'h100-mega' lacks "
        "LD_LIBRARY_PATH (tcpxo-plugin-path), so NCCL falls back to TCP on the primary NIC "
        "instead of the 1,600 Gbps of GPUDirect-TCPXO per node · observed: "
        "LD_LIBRARY_PATH=(unset) (env from the submitter's env only (no TaskProlog in "
        "slurm.conf; slurmd's env is not inherited))"
    )
    assert "lacks NCCL_FASTRAK_IFNAME (tcpxo-ifname)" in second
    assert (
        "required: NCCL_FASTRAK_IFNAME: eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8 (source: GoogleCloudPlatform/"
        "container-engine-accelerators@992db812" in second
    )


def test_an_efa_runtime_image_without_aws_ofi_nccl_falls_back_to_tcp(pack, efa):
    (finding,) = _ours(pack.stack(_with_image(efa, "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime")))
    assert finding[1] == "mandatory"
    assert finding[2].startswith(
        "ClusterTrainingRuntime torch-p5: its training process on pool 'p5' lacks "
        "libfabric + aws-ofi-nccl (efa-image), so NCCL falls back to TCP"
    )
    assert (
        "observed: image pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime has no libfabric (EFA provider) and "
        "aws-ofi-nccl" in finding[2]
    )


def test_a_waiver_for_the_pool_silences_it(pack, slurm):
    pack.configure({ID: {"waivers": [{"rule": ID, "resource": "h100-mega", "reason": "single-node smoke tests"}]}})
    try:
        assert _ours(pack.stack(_without_task_prolog(slurm))) == []
    finally:
        pack.configure()


def _with_martians(resources, nics):
    out = [copy.deepcopy(r) for r in resources]
    (ds,) = [
        r
        for r in out
        if r.type == "kubernetes:apps/v1:DaemonSet" and r.inputs["metadata"]["name"] == "nccl-rdma-installer-arm64"
    ]
    props = wire(ds)
    # A4X's installer has no martians step (as upstream's): put one back, naming ``nics`` NICs, to see the rule judge it
    props["spec"]["template"]["spec"]["initContainers"].insert(
        0,
        {
            "name": "disable-log-martians",
            "image": "busybox:1.37",
            "command": [
                "/bin/sh",
                "-c",
                "; ".join(f"echo 0 > /proc/sys/net/ipv4/conf/gpu{i}rdma0/log_martians" for i in range(nics)),
            ],
        },
    )
    return [with_props(r, props) if r is ds else r for r in out]


def test_a_node_daemonset_naming_an_rdma_nic_the_machine_lacks_is_a_violation(pack):
    a4x = _record("gke-a4x-nvl72")
    assert _ours(pack.stack(_with_martians(a4x, 4))) == []
    (finding,) = _ours(pack.stack(_with_martians(a4x, 8)))
    assert finding[1] == "mandatory"
    assert finding[2].startswith(
        "DaemonSet nccl-rdma-installer-arm64: its containers name RDMA NICs that "
        "a4x-highgpu-4g on pool 'gb200' does not have, so the step fails on every node · "
        "observed: gpu4rdma0, gpu5rdma0, gpu6rdma0, gpu7rdma0"
    )
    # the limit is cited from the cloud-limits table: upstream's machine docs first, the catalog column named in the fix
    assert "(source: https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth" in finding[2], finding[2]
    assert "catalog/data/fabrics.csv rdma_networks" in finding[2]
