"""A service's ``resources`` larger than one node of its pool offers is refused (the pod would never schedule),
with the node's numbers, the limit and the default share; both fields are reported at once."""

from __future__ import annotations

from typing import Any

from preview.engine import PROJECT_ROOT, read_stack_file
from stacks.validate.issues import SpecError, SpecIssue
from stacks.validate.load import decode_config, load_spec
from tests.support.spec.edit import edits

SVC = ("serving", "services", 0)


def _stack(name: str) -> dict[str, Any]:
    return decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{name}.yaml"))


def _errors(raw: dict[str, Any]) -> list[SpecIssue]:
    try:
        load_spec(raw)
    except SpecError as exc:
        return [e for e in exc.errors if "serving" in e.path]
    return []


def test_cpu_and_memory_above_what_an_a3_node_offers_are_both_refused_with_the_node_numbers():
    errors = _errors(edits(_stack("gke-serving"), {(*SVC, "resources"): {"cpu": 200, "memoryGib": 1800}}))
    by_path = {e.path: e for e in errors}
    assert sorted(by_path) == [
        "gpu-cluster:serving.services[0].resources.cpu",
        "gpu-cluster:serving.services[0].resources.memoryGib",
    ]
    cpu = by_path["gpu-cluster:serving.services[0].resources.cpu"]
    # 208 vCPU − 13 reserved = 195; 1872 GiB − 8 % = 1722 GiB
    assert "one a3-highgpu-8g node has 195 cores and 1722 GiB for pods" in cpu.problem
    assert cpu.allowed == "at most 195" and cpu.value == 200
    assert "(default: 24 cores, 215 GiB)" in cpu.fix
    assert by_path["gpu-cluster:serving.services[0].resources.memoryGib"].allowed == "at most 1722"


def test_more_than_two_cpus_on_a_g6e_xlarge_is_refused():
    errors = _errors(edits(_stack("eks-serving"), {(*SVC, "resources"): {"cpu": 4}}))
    assert [(e.path, e.allowed) for e in errors] == [("gpu-cluster:serving.services[0].resources.cpu", "at most 2")]


def test_resources_a_node_can_hold_are_accepted():
    assert _errors(edits(_stack("gke-serving"), {(*SVC, "resources"): {"cpu": 195, "memoryGib": 1722}})) == []
