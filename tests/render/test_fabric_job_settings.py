"""What a fabric job gets beyond the NCCL env: ``/dev/shm`` as a Memory emptyDir sized from the machine's RAM
(``fabric.sharedMemoryGiB`` overrides it, within the RAM), on the ``torch-<pool>`` runtime and the NodeSet's slurmd
alike; on EKS an EFA-capable default runtime image in the stack's region (``fabric.runtimeImage`` overrides it, also
for slurmd), and a warning when the override is an image known to lack libfabric/aws-ofi-nccl."""

from __future__ import annotations

import copy
import textwrap

import pytest

from render.fabric_pod import pod_fabric, shm_gib
from stacks.plan.slurm import plan_slurm
from render.slurm_values import slurm_values
from render.trainer import TORCH_IMAGE, runtime_image, training_runtimes
from render.kueue import render_kueue
from tests.support.spec.edit import edit
from tests.support.spec.scheduling_fixtures import EKS_TEAMS, GKE_TEAMS, spec_and_facts, with_slurmd_efa_image
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

DLC = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.6.0-gpu-py312-cu126-ubuntu22.04-ec2"


def _pod(raw: dict) -> dict:
    spec, facts = spec_and_facts(raw)
    runtime = training_runtimes(facts, render_kueue(spec.scheduling, facts).placements)[0]
    return runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def _shm(pod_spec: dict, container: dict) -> str | None:
    name = next((m["name"] for m in container.get("volumeMounts", []) if m["mountPath"] == "/dev/shm"), None)
    volume = next((v for v in pod_spec.get("volumes", []) if v["name"] == name), {})
    empty = volume.get("emptyDir", {})
    return empty.get("sizeLimit") if empty.get("medium") == "Memory" else None


@pytest.mark.parametrize(
    "ram,override,want", [(1872, None, 234), (2952, None, 256), (2048, None, 256), (4, None, 1), (1872, 64, 64)]
)
def test_shm_is_an_eighth_of_the_ram_at_most_256_gib_unless_set(ram, override, want):
    assert shm_gib(ram, override) == want


@pytest.mark.parametrize("raw,size", [(GKE_TEAMS, "234Gi"), (EKS_TEAMS, "256Gi")], ids=["tcpx", "efa"])
def test_runtime_and_nodeset_mount_the_same_memory_shm(raw, size):
    raw = copy.deepcopy(raw)
    if raw["cloud"] == "aws":
        raw["gpuRuntime"] = {"mode": "device-plugin", "efaDevicePlugin": True}
    pod = _pod(raw)
    assert _shm(pod, pod["containers"][0]) == size
    spec, facts = spec_and_facts(
        with_slurmd_efa_image(
            {
                **raw,
                "scheduling": {
                    "workload": "slurm",
                    "queues": [{"name": "team", "quotas": [{"pool": raw["nodePools"][0]["name"], "gpus": 8}]}],
                },
            }
        )
    )
    values = slurm_values(plan_slurm(spec.scheduling, facts), "ml", fabrics={p.name: pod_fabric(p) for p in facts})
    nodeset = values["nodesets"][raw["nodePools"][0]["name"]]
    assert _shm(nodeset["podSpec"], nodeset["slurmd"]) == size


def test_shared_memory_gib_overrides_and_must_fit_in_the_ram():
    pod = _pod(edit(GKE_TEAMS, "nodePools[0].fabric", {"sharedMemoryGiB": 64}))
    assert _shm(pod, pod["containers"][0]) == "64Gi"
    with pytest.raises(SpecError) as exc:
        load_spec(edit(GKE_TEAMS, "nodePools[0].fabric", {"sharedMemoryGiB": 1872}))
    assert [str(e) for e in exc.value.errors] == [
        textwrap.dedent("""\
        error: gpu-cluster:nodePools[0].fabric.sharedMemoryGiB: pool 'h100': /dev/shm of 1872 GiB does not fit in the 1872 GiB of RAM of a a3-highgpu-8g node
          received: 1872
          allowed:  1 to 1871
          fix:      lower sharedMemoryGiB, or omit it (an eighth of the RAM, at most 256 GiB)""")
    ]


def test_efa_runtimes_default_to_the_deep_learning_container_of_the_region():
    raw = {**copy.deepcopy(EKS_TEAMS), "gpuRuntime": {"mode": "device-plugin", "efaDevicePlugin": True}}
    assert _pod(raw)["containers"][0]["image"] == DLC
    spec, facts = spec_and_facts(raw)
    assert runtime_image(facts[1]) == TORCH_IMAGE  # the single-node L40S pool has no fabric
    west = edit(
        edit(raw, "region", "us-west-2"),
        "cluster.subnets",
        {"us-west-2a": "subnet-0123456789abcdef0", "us-west-2b": "subnet-0123456789abcdef1"},
    )
    west["nodePools"][0]["zones"], west["nodePools"][1]["zones"] = ["us-west-2a"], ["us-west-2a", "us-west-2b"]
    assert _pod(west)["containers"][0]["image"] == DLC.replace("us-east-1", "us-west-2")


def test_runtime_image_overrides_the_runtime_and_slurmd():
    raw = {**copy.deepcopy(EKS_TEAMS), "gpuRuntime": {"mode": "device-plugin", "efaDevicePlugin": True}}
    raw["nodePools"][0]["fabric"] = {"runtimeImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1.2"}
    assert _pod(raw)["containers"][0]["image"] == "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1.2"
    spec, facts = spec_and_facts(
        {
            **raw,
            "scheduling": {"workload": "slurm", "queues": [{"name": "team", "quotas": [{"pool": "p5", "gpus": 8}]}]},
        }
    )
    values = slurm_values(plan_slurm(spec.scheduling, facts), "ml", fabrics={p.name: pod_fabric(p) for p in facts})
    assert values["nodesets"]["p5"]["slurmd"]["image"] == {
        "repository": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train",
        "tag": "1.2",
    }


def test_an_efa_runtime_image_without_aws_ofi_nccl_is_a_warning():
    raw = edit(EKS_TEAMS, "nodePools[0].fabric", {"runtimeImage": "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime"})
    _, warnings = load_spec(raw)
    assert [str(w).splitlines()[0] for w in warnings] == [
        "warning: gpu-cluster:nodePools[0].fabric.runtimeImage: pool 'p5': image has no libfabric (EFA provider) and "
        "aws-ofi-nccl, so NCCL on this EFA pool falls back to TCP sockets"
    ]
    assert load_spec(edit(EKS_TEAMS, "nodePools[0].fabric", {"runtimeImage": DLC}))[1] == []
