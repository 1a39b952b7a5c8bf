"""A vLLM pod requests its GPUs' share of the node's CPU and memory (memory limit = request), so it is never
BestEffort on a node it shares with training; ``resources`` overrides the share."""

from __future__ import annotations

from typing import Any

import pytest

from catalog import load_catalog
from preview.engine import PROJECT_ROOT, read_stack_file
from render.serving import render_serving
from stacks.plan.stack import plan_stack
from stacks.validate.load import decode_config, load_spec
from tests.support.spec.edit import edits

SVC = ("serving", "services", 0)


def _raw(stack: str) -> dict[str, Any]:
    return decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"))


def _workloads(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    spec, _ = load_spec(raw)
    plan = plan_stack(spec, load_catalog())
    assert plan.spec.serving is not None
    objs = render_serving(
        plan.spec.serving,
        {f.name: f for f in plan.facts},
        plan.cloud,
        plan.spec.region,
        plan.spec.project,
        plan.kueue is not None,
    )
    return {s.name: s.workload for s in objs.services}


def _vllm(pod_template: dict[str, Any]) -> dict[str, Any]:
    (c,) = [c for c in pod_template["spec"]["containers"] if c["name"] == "vllm"]
    return c["resources"]


@pytest.mark.parametrize(
    ("stack", "service", "cpu", "memory"),
    [
        # a3-highgpu-8g: (208 vCPU − 13 reserved) × 1/8 GPUs = 24.4 -> 24; (1872 GiB − 8 %) = 1722 GiB × 1/8 -> 215
        ("gke-serving", "chat", "24", "215Gi"),
        # g6e.xlarge: 4 vCPU − 2 reserved = 2 (below the ~3.9 allocatable minus the DaemonSets); 32 − 6 GiB = 26
        ("eks-serving", "support-bot", "2", "26Gi"),
    ],
)
def test_a_vllm_pod_requests_its_gpus_share_of_the_node_cpu_and_memory(stack, service, cpu, memory):
    res = _vllm(_workloads(_raw(stack))[service]["spec"]["template"])
    assert res["requests"] == {"nvidia.com/gpu": 1, "cpu": cpu, "memory": memory}
    # memory limit = request: never evicted for exceeding its request; no CPU limit: no CFS throttling of the engine
    assert res["limits"] == {"nvidia.com/gpu": 1, "memory": memory}


def test_every_pod_of_a_multi_node_replica_requests_the_whole_node_it_holds():
    lws = _workloads(_raw("gke-serving"))["long-context"]["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        res = _vllm(lws[role])
        assert res["requests"] == {"nvidia.com/gpu": 8, "cpu": "195", "memory": "1722Gi"}, role
        assert res["limits"]["memory"] == "1722Gi"


def test_resources_override_the_share_field_by_field():
    raw = edits(_raw("gke-serving"), {(*SVC, "resources"): {"cpu": 8.5, "memoryGib": 64}})
    res = _vllm(_workloads(raw)["chat"]["spec"]["template"])
    assert res["requests"] == {"nvidia.com/gpu": 1, "cpu": "8.5", "memory": "64Gi"}
    assert res["limits"]["memory"] == "64Gi"
    only_cpu = edits(_raw("gke-serving"), {(*SVC, "resources"): {"cpu": 12}})
    res = _vllm(_workloads(only_cpu)["chat"]["spec"]["template"])
    assert (res["requests"]["cpu"], res["requests"]["memory"]) == ("12", "215Gi")
