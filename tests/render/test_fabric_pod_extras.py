"""What a fabric job needs besides NICs: EFA pods request the 2 MiB huge pages AWS's EKS EFA guide asks for (and a
memory request, without which Kubernetes refuses huge pages), TCPX GPU containers mount the plugin libraries and get
A3 High's NIC CPU bindings. Pods are parsed and validated with kubernetes-validate, not grepped."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from render.fabric_pod import EFA_RESOURCE, PodFabric, apply_to_container, pod_fabric
from render.nccl_env import NVIDIA_LIB64, TCPX_NCCL_ENV
from render.kueue import render_kueue
from stacks.plan.slurm import plan_slurm
from render.slurm_values import slurm_values
from render.trainer import training_runtimes
from tests.support.spec.scheduling_fixtures import EKS_TEAMS, GKE_TEAMS, spec_and_facts, with_slurmd_efa_image

K8S_VERSION = "1.34.0"


def _pod(raw: dict) -> dict:
    spec, facts = spec_and_facts(raw)
    runtime = {
        r["metadata"]["name"]: r for r in training_runtimes(facts, render_kueue(spec.scheduling, facts).placements)
    }[f"torch-{raw['nodePools'][0]['name']}"]
    template = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "job-node-0-0", **template.get("metadata", {})},
        "spec": template["spec"],
    }


def test_efa_runtime_requests_the_guides_huge_pages_with_a_memory_request_and_validates():
    pod = _pod(EKS_TEAMS)
    res = pod["spec"]["containers"][0]["resources"]
    assert res["requests"]["hugepages-2Mi"] == res["limits"]["hugepages-2Mi"] == "5120Mi"
    assert res["requests"]["memory"] == "8000Mi" and "memory" not in res["limits"], "a limit would OOM training"
    assert res["requests"][EFA_RESOURCE] == 32
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


def test_efa_memory_request_is_not_added_where_the_container_already_requests_cpu_or_memory():
    _, facts = spec_and_facts(EKS_TEAMS)
    fabric = pod_fabric(facts[0])
    assert isinstance(fabric, PodFabric)
    slurmd = {
        "name": "slurmd",
        "resources": {"requests": {"cpu": "180", "memory": "1800Gi"}, "limits": {"cpu": "180", "memory": "1800Gi"}},
    }
    out = apply_to_container(slurmd, fabric)["resources"]
    assert out["requests"]["memory"] == "1800Gi" and out["requests"]["hugepages-2Mi"] == "5120Mi"
    assert out["limits"]["hugepages-2Mi"] == "5120Mi"


def test_slinky_nodeset_slurmd_requests_the_huge_pages_too():
    raw = copy.deepcopy(EKS_TEAMS)
    raw["scheduling"] = {
        "workload": "slurm",
        "queues": [{"name": "research", "quotas": [{"pool": raw["nodePools"][0]["name"], "gpus": 8}]}],
    }
    spec, facts = spec_and_facts(with_slurmd_efa_image(raw))
    values = slurm_values(plan_slurm(spec.scheduling, facts), "ml", fabrics={p.name: pod_fabric(p) for p in facts})
    slurmd = values["nodesets"][raw["nodePools"][0]["name"]]["slurmd"]["resources"]
    assert slurmd["requests"]["hugepages-2Mi"] == slurmd["limits"]["hugepages-2Mi"] == "5120Mi"
    assert slurmd["requests"]["memory"] == slurmd["limits"]["memory"], "slurmd keeps its Guaranteed QoS"


def test_gke_fabrics_request_no_huge_pages():
    pod = _pod(GKE_TEAMS)
    assert not any(k.startswith("hugepages") for k in pod["spec"]["containers"][0]["resources"]["requests"])


def test_tcpx_gpu_container_mounts_the_plugin_libraries_and_binds_the_nic_cpus():
    pod = _pod(GKE_TEAMS)
    node = next(c for c in pod["spec"]["containers"] if c["name"] == "node")
    mounts = {m["name"]: m["mountPath"] for m in node["volumeMounts"]}
    assert mounts == {"tcpx-socket": "/run/tcpx", "tcpx-libraries": NVIDIA_LIB64, "dshm": "/dev/shm"}
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert volumes["tcpx-libraries"]["hostPath"]["path"] == "/home/kubernetes/bin/nvidia/lib64"
    env = {e["name"]: e["value"] for e in node["env"]}
    assert env["NCCL_GPUDIRECTTCPX_TX_BINDINGS"].split(";")[0] == "eth1:8-21,112-125"
    assert [b.split(":")[0] for b in env["NCCL_GPUDIRECTTCPX_RX_BINDINGS"].split(";")] == [
        "eth1",
        "eth2",
        "eth3",
        "eth4",
    ]
    assert env["NCCL_P2P_PXN_LEVEL"] == "0" and env["NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX"] == "/run/tcpx"
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


@pytest.mark.parametrize("key", ["NCCL_GPUDIRECTTCPX_TX_BINDINGS", "NCCL_GPUDIRECTTCPX_RX_BINDINGS"])
def test_every_bound_nic_is_a_tcpx_nic(key):
    nics = set(TCPX_NCCL_ENV["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"].split(","))
    bound = {b.split(":")[0] for b in TCPX_NCCL_ENV[key].split(";")}
    assert bound == nics
