"""The fabric contract (``stacks/plan/fabric_contract.py``) over what the program really registers: every example stack
with a fabric pool runs under Pulumi mocks, and each training runtime / Slinky NodeSet on a fabric pool meets every
sourced requirement of its fabric (env, library path, mounts, interfaces, sidecar, devices, /dev/shm, image). Then the
contract is shown to fail where a job would not use the fabric: the workloads as they were rendered before the fabric
fixes (TCPX env, no /dev/shm, gIB tuning only in BASH_ENV, the PyTorch image on EFA, slurmd's env instead of a
TaskProlog), each built by undoing one fix on the rendered objects."""

from __future__ import annotations

import copy
import re

import pytest

from catalog.fabric import FabricKind, load_fabric_catalog
from catalog.fabric_requirements import WithoutIt, load_requirements
from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from stacks.plan.fabric_contract import check
from stacks.plan.process_view import (
    RELEASE_TYPE,
    RUNTIME_TYPE,
    ProcessView,
    nodeset_views,
    runtime_views,
    workload_views,
)
from tests.support.spec.scheduling_fixtures import CAT

FAB = load_fabric_catalog()
NODE_POOL_TYPES = ("gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup")
EXAMPLES = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))


def _recorded(stack: str):
    return run_program(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"), stack).resources


def _fabric_pools(stack: str) -> dict[str, tuple[FabricKind, str, int]]:
    """pool -> (fabric, machine, NICs) of the example's pools that get a fabric (from the spec, not the renderers)."""
    from stacks.plan.facts import pool_facts
    from stacks.validate.load import load_spec

    flat = read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")
    raw = {k.split(":", 1)[1]: v for k, v in flat.items() if k.startswith("gpu-cluster:")}
    spec, _ = load_spec(raw, CAT)
    out = {}
    for p in spec.node_pools:
        facts = pool_facts(spec, p, CAT)
        if facts.fabric is not None and (
            facts.fabric.kind != FabricKind.EFA or facts.resolved_runtime.efa_device_plugin
        ):
            out[p.name] = (facts.fabric.kind, facts.machine.machine_type, facts.fabric.gpu_nics)
    return out


FABRIC_EXAMPLES = [s for s in EXAMPLES if _fabric_pools(s)]


@pytest.fixture(scope="module", params=FABRIC_EXAMPLES)
def example(request):
    resources = _recorded(request.param)
    return request.param, [(r.type, r.inputs) for r in resources]


def test_the_examples_cover_every_fabric():
    kinds = {k for s in FABRIC_EXAMPLES for k, _, _ in _fabric_pools(s).values()}
    assert kinds == {FabricKind.TCPX, FabricKind.TCPXO, FabricKind.RDMA, FabricKind.EFA}


def test_every_workload_on_a_fabric_pool_meets_its_contract(example):
    stack, objects = example
    pools = _fabric_pools(stack)
    views = [v for v in workload_views(objects) if v.pool in pools]
    wired = {v.pool for v in views}
    scheduled = any(
        t == RUNTIME_TYPE or (t == RELEASE_TYPE and "nodesets" in (props.get("values") or {})) for t, props in objects
    )
    if not scheduled:
        pytest.skip(f"{stack} runs no scheduler: no workload to judge")
    assert wired == set(pools), f"{stack}: fabric pools without a runtime or NodeSet: {set(pools) - wired}"
    for view in views:
        kind, machine, nics = pools[view.pool]
        result = check(view, kind, machine, nics)
        assert {o.requirement.id for o in result.unmet} == set(), f"{stack} {view.workload}: " + "; ".join(
            f"{o.requirement.id}: {o.observed}" for o in result.unmet
        )
        assert len(result.outcomes) >= 6


def test_every_requirement_row_has_an_upstream_source_and_each_tcp_row_names_a_commit_or_guide():
    rows = load_requirements()
    assert len(rows) >= 50
    for r in rows:
        assert r.source.strip(), r.id
        if r.without_it == WithoutIt.TCP:
            assert re.search(r"@[0-9a-f]{7,}|docs\.aws\.amazon\.com|AWS EKS user guide", r.source), r.id


# --- the contract fails on the workloads as they were before the fixes ---------------------------------------


def _runtime(stack: str, name: str) -> dict:
    return next(
        copy.deepcopy(r.inputs)
        for r in _recorded(stack)
        if r.type == RUNTIME_TYPE and r.inputs["metadata"]["name"] == name
    )


def _container(runtime: dict) -> dict:
    return runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"
    ][0]


def _pod(runtime: dict) -> dict:
    return runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def _unmet(view: ProcessView, kind: FabricKind, machine: str, nics: int) -> set[str]:
    return {o.requirement.id for o in check(view, kind, machine, nics).unmet}


def test_the_old_tcpx_env_and_no_shm_are_unmet():
    runtime = _runtime("gke-kueue", "torch-h100")
    assert _unmet(runtime_views(runtime)[0], FabricKind.TCPX, "a3-highgpu-8g", 4) == set()
    env = _container(runtime)["env"]
    old = {"NCCL_ALGO": "Ring", "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS": "50000"}
    for e in env:
        e["value"] = old.get(e["name"], e["value"])
    env.append({"name": "NCCL_GPUDIRECTTCPX_FORCE_ACK", "value": "0"})
    _container(runtime)["volumeMounts"] = [m for m in _container(runtime)["volumeMounts"] if m["name"] != "dshm"]
    assert _unmet(runtime_views(runtime)[0], FabricKind.TCPX, "a3-highgpu-8g", 4) == {
        "tcpx-algo",
        "tcpx-steering",
        "tcpx-no-force-ack",
        "tcpx-shm",
    }


def test_gib_tuning_only_through_bash_env_is_unmet():
    runtime = _runtime("gke-a3-ultra-rdma", "torch-h200")
    keep = {"NCCL_NET", "BASH_ENV", "LD_LIBRARY_PATH"}  # what the runtime set before: a `torchrun` never sources
    _container(runtime)["env"] = [e for e in _container(runtime)["env"] if e["name"] in keep]
    assert _unmet(runtime_views(runtime)[0], FabricKind.RDMA, "a3-ultragpu-8g", 8) == {
        "rdma-cross-nic",
        "rdma-gdr",
        "rdma-p2p-chunk",
        "rdma-nvls-chunk",
        "rdma-adaptive-routing",
        "rdma-qps",
        "rdma-tc",
        "rdma-fifo-tc",
        "rdma-tuner-a3u",
    }


def test_the_pytorch_image_on_efa_falls_back_to_tcp():
    runtime = _runtime("eks-kueue", "torch-p5")
    assert "pytorch-training" in _container(runtime)["image"]
    _container(runtime)["image"] = "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime"
    result = check(runtime_views(runtime)[0], FabricKind.EFA, "p5.48xlarge", 32)
    assert [o.requirement.id for o in result.tcp_fallbacks] == ["efa-image"]


def test_a_nodeset_whose_env_is_only_on_slurmd_gets_none_of_it():
    """Before the TaskProlog: the NCCL env sat on the slurmd container, which tasks never inherit."""
    release = next(
        copy.deepcopy(r.inputs)
        for r in _recorded("gke-h100-512")
        if r.type == RELEASE_TYPE and "nodesets" in (r.inputs.get("values") or {})
    )
    values = release["values"]
    assert values["nodesets"]["h100-mega"]["slurmd"]["env"], "slurmd still carries the env (its own processes)"
    values["controller"]["extraConf"] = "\n".join(
        line for line in values["controller"]["extraConf"].split("\n") if not line.startswith("TaskProlog=")
    )
    view = next(v for v in nodeset_views(values, None) if v.pool == "h100-mega")
    assert view.env == {}
    result = check(view, FabricKind.TCPXO, "a3-megagpu-8g", 8)
    assert {o.requirement.id for o in result.tcp_fallbacks} == {"tcpxo-plugin-path", "tcpxo-ifname"}
    assert result.summary.startswith("contract: ") and "/22 requirements met" in result.summary


def test_a_runtime_without_the_fabric_interfaces_or_sidecar_falls_back_to_tcp():
    runtime = _runtime("gke-kueue", "torch-h100")
    template = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    template["metadata"]["annotations"].pop("networking.gke.io/interfaces")
    _pod(runtime)["initContainers"] = []  # no RxDM, and no ready gate (as before the ready gate existed)
    result = check(runtime_views(runtime)[0], FabricKind.TCPX, "a3-highgpu-8g", 4)
    assert {o.requirement.id for o in result.tcp_fallbacks} == {"tcpx-nics", "tcpx-rxdm", "tcpx-ready-gate"}


def test_a_gate_after_the_sidecar_does_not_count():
    runtime = _runtime("gke-kueue", "torch-h100")
    gate, rxdm = _pod(runtime)["initContainers"]
    assert gate["name"] == "fabric-ready"
    _pod(runtime)["initContainers"] = [rxdm, gate]  # RxDM would start before the plugin is there
    result = check(runtime_views(runtime)[0], FabricKind.TCPX, "a3-highgpu-8g", 4)
    assert [o.requirement.id for o in result.unmet] == ["tcpx-ready-gate"]
