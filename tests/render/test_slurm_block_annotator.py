"""The Slurm block annotator's program as a unit: which nodes it patches, the JSON patch it sends (applied here as
RFC 6902 does for its three operations), and that a node changed meanwhile is left for the next round."""

from __future__ import annotations

import copy
import io
import urllib.error

from render.slurm_block_annotator_program import ANNOTATION, TAINT_KEY, node_patch, run_once

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
REGISTRATION = {"key": TAINT_KEY, "value": "pending", "effect": "NoSchedule"}
TOPOLOGIES = {"gb200": "gb200"}


def node(name: str, block: str, taints: list[dict], annotations: dict | None = None) -> dict:
    labels = {"gpu-cluster/pool": "gb200", "gpu-cluster/slurm-block": block}
    meta = {"name": name, "labels": labels, "resourceVersion": "7", "annotations": annotations or {}}
    return {"metadata": meta, "spec": {"taints": taints}}


def apply(obj: dict, patch: list[dict]) -> dict:
    """RFC 6902 test / add / replace on the two-level paths the program uses (the API server's JSON patch)."""
    out = copy.deepcopy(obj)
    for op in patch:
        parent, key = op["path"].split("/")[1:]
        if op["op"] == "test":
            assert out[parent][key] == op["value"], "test failed: the API server answers 422"
        elif op["op"] in ("add", "replace"):
            assert op["op"] == "add" or key in out[parent]
            out[parent][key] = op["value"]
    return out


def test_a_registering_node_gets_its_block_annotation_and_loses_only_the_registration_taint():
    before = node("ip-1", "gb200-b1", [GPU_TAINT, REGISTRATION], {"node.alpha.kubernetes.io/ttl": "0"})
    after = apply(before, node_patch(before, TOPOLOGIES) or [])
    assert after["metadata"]["annotations"] == {"node.alpha.kubernetes.io/ttl": "0", ANNOTATION: "gb200:gb200-b1"}
    assert after["spec"]["taints"] == [GPU_TAINT]  # the GPU taint stays


def test_a_node_already_annotated_or_of_an_unknown_pool_is_left_alone():
    assert node_patch(node("ip-1", "gb200-b0", [GPU_TAINT]), TOPOLOGIES) is None  # done: no taint
    stranger = node("ip-2", "h100-b0", [REGISTRATION])
    stranger["metadata"]["labels"]["gpu-cluster/pool"] = "h100"
    assert node_patch(stranger, TOPOLOGIES) is None  # keeps its taint: no block to give it


def test_the_patch_is_refused_when_the_node_changed_since_it_was_read():
    stale = node("ip-1", "gb200-b0", [REGISTRATION])
    patch = node_patch(stale, TOPOLOGIES) or []
    moved = copy.deepcopy(stale)
    moved["metadata"]["resourceVersion"] = "8"
    try:
        apply(moved, patch)
    except AssertionError as exc:
        assert "test failed" in str(exc)
    else:
        raise AssertionError("a patch of a changed node must fail its resourceVersion test")


def test_a_round_patches_each_tainted_node_once_and_retries_a_refused_one_later():
    nodes = [
        node("ip-1", "gb200-b0", [REGISTRATION]),
        node("ip-2", "gb200-b0", [GPU_TAINT]),
        node("ip-3", "gb200-b1", [REGISTRATION]),
    ]
    calls: list[tuple[str, str]] = []

    def call(method: str, path: str, body):
        calls.append((method, path))
        if method == "GET":
            return {"items": nodes}
        if path.endswith("ip-3"):
            raise urllib.error.HTTPError(path, 422, "test failed", {}, io.BytesIO())  # type: ignore[arg-type]
        return {}

    assert run_once(TOPOLOGIES, call) == ["ip-1"]
    assert calls == [
        ("GET", "/api/v1/nodes?labelSelector=gpu-cluster%2Fslurm-block"),
        ("PATCH", "/api/v1/nodes/ip-1"),
        ("PATCH", "/api/v1/nodes/ip-3"),
    ]
