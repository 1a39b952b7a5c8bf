"""cross-layer-efa-requests: the recorded eks-kueue stack (torch-p5 requests 32 EFA on p5.48xlarge) passes; a
runtime or NodeSet asking for another count, or none while the EFA device plugin runs, is a mandatory violation;
a waiver silences it."""

from __future__ import annotations

import copy

import pytest

from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from tests.support.policy.harness import Pack, with_props, wire

ID = "cross-layer-efa-requests"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
EFA = "vpc.amazonaws.com/efa"
REQUIRED = " · required: vpc.amazonaws.com/efa: 32 per pod, every EFA interface of pool 'p5's nodes\n"
FIX = (
    "Fix: request vpc.amazonaws.com/efa: 32 in the runtime's container resources (requests and limits; gpu-cluster "
    "renders this for fabric pools with efaDevicePlugin: true)"
)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


@pytest.fixture(scope="module")
def recorded():
    return tuple(run_program(read_stack_file(PROJECT_ROOT / "Pulumi.eks-kueue.yaml"), "eks-kueue").resources)


def _with_efa(resources, value):
    out = [copy.deepcopy(r) for r in resources]
    (runtime,) = [r for r in out if r.type == RUNTIME and r.inputs["metadata"]["name"] == "torch-p5"]
    props = wire(runtime)
    limits = props["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"
    ][0]["resources"]["limits"]
    if value is None:
        limits.pop(EFA)
    else:
        limits[EFA] = value
    return [with_props(r, props) if r is runtime else r for r in out]


def _ours(diags):
    return [d for d in diags if d[0] == ID]


def test_the_wired_runtime_passes(pack, recorded):
    assert _ours(pack.stack(list(copy.deepcopy(recorded)))) == []


def test_fewer_efa_than_the_nodes_have_is_a_violation(pack, recorded):
    assert _ours(pack.stack(_with_efa(recorded, 4))) == [
        (
            ID,
            "mandatory",
            (
                "training runtime 'torch-p5': its pods on pool 'p5' request fewer EFA interfaces than the nodes have, so NCCL "
                "uses 4 of the 32"
                " · observed: vpc.amazonaws.com/efa: 4 in the runtime's container resources" + REQUIRED + FIX
            ),
        )
    ]


def test_more_than_the_nodes_have_never_schedules(pack, recorded):
    (finding,) = _ours(pack.stack(_with_efa(recorded, 64)))
    assert finding[2].startswith(
        "training runtime 'torch-p5': its pods on pool 'p5' request more EFA interfaces "
        "than the nodes have, so they never fit a node and stay Pending · observed: "
        "vpc.amazonaws.com/efa: 64 in the runtime's container resources" + REQUIRED
    )


def test_no_request_while_the_plugin_runs_falls_back_to_tcp(pack, recorded):
    assert _ours(pack.stack(_with_efa(recorded, None))) == [
        (
            ID,
            "mandatory",
            (
                "training runtime 'torch-p5': its pods on pool 'p5' request no EFA interfaces, so NCCL cannot use the 32 "
                "EFA interfaces of their nodes and falls back to TCP"
                " · observed: no vpc.amazonaws.com/efa in the runtime's container resources, while the EFA device plugin "
                "advertises it" + REQUIRED + FIX
            ),
        )
    ]


def test_a_waiver_silences_the_runtime(pack, recorded):
    pack.configure({ID: {"waivers": [{"rule": ID, "resource": "torch-p5", "reason": "TCP smoke tests only"}]}})
    try:
        assert _ours(pack.stack(_with_efa(recorded, 4))) == []
    finally:
        pack.configure()


def test_a_slurm_nodeset_with_the_wrong_count_is_a_violation(pack):
    from tests.support.spec.scheduling_fixtures import EKS_TEAMS, flat_config, with_slurmd_efa_image

    raw = copy.deepcopy(EKS_TEAMS)
    raw["scheduling"] = {"workload": "slurm", "queues": [{"name": "research", "quotas": [{"pool": "p5", "gpus": 8}]}]}
    resources = list(run_program(flat_config(with_slurmd_efa_image(raw))).resources)  # EFA needs its slurmd image
    assert _ours(pack.stack(resources)) == []
    (release,) = [r for r in resources if r.type == "kubernetes:helm.sh/v3:Release" and r.name == "slurm-slurm"]
    props = wire(release)
    props["values"]["nodesets"]["p5"]["slurmd"]["resources"]["limits"][EFA] = 8
    bad = [with_props(r, props) if r is release else r for r in resources]
    (finding,) = _ours(pack.stack(bad))
    assert finding[2] == (
        "Slurm NodeSet 'p5': its pods on pool 'p5' request fewer EFA interfaces than the nodes have, so NCCL uses 8 of "
        "the 32 · observed: vpc.amazonaws.com/efa: 8 in nodesets.p5.slurmd.resources"
        + REQUIRED
        + "Fix: request vpc.amazonaws.com/efa: 32 in nodesets.p5.slurmd.resources (requests and limits; gpu-cluster "
        "renders this for fabric pools with efaDevicePlugin: true)"
    )
