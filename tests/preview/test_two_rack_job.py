"""A job of two GB200 NVL72 racks (144 GPUs, 36 nodes) runs on `gke-a4x-nvl72`: the stack renders a block-level
runtime beside the one-rack runtime, `job-objects` picks it for more than one rack's nodes, Kueue's flavor assigner
(the port in stacks/plan/admission.py) admits its PodSet against the rendered ClusterQueue, and TAS can place it on
the rendered Topology over the stack's two rack node pools (both sub-blocks of one reservation block). The one-rack
runtime's PodSet of 36 cannot be placed, which is why the block runtime exists."""

from __future__ import annotations

import pytest
import yaml

from preview.__main__ import main
from stacks.plan.admission import assign, podset_from_template, queue_from_objects
from stacks.plan.kueue_topology import REQUIRED_ANNOTATION, SLICE_SIZE_ANNOTATION, SLICE_TOPOLOGY_ANNOTATION
from stacks.plan.tas_fit import TopologyAsk, ask_of, placement_problem, pool_nodes
from stacks.validate.load import decode_config
from stacks.validate.planned import load_planned
from preview.engine import read_stack_file
from tests.conftest import PROJECT_ROOT
from tests.support.helm.examples import recording
from tests.support.kube.admission import k8s_objects, runtime_pod

STACK = "gke-a4x-nvl72"


def job_objects(capsys, *args: str) -> tuple[int, list[dict], str]:
    code = main(["job-objects", "--stack", STACK, *args])
    out, err = capsys.readouterr()
    return code, [d for d in yaml.safe_load_all(out) if d] if code == 0 else [], err


@pytest.fixture(scope="module")
def objects() -> list[dict]:
    return k8s_objects(recording(STACK))


@pytest.fixture(scope="module")
def gb200():
    plan = load_planned(decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{STACK}.yaml")), stack_name=STACK).plan
    (pool,) = [f for f in plan.facts if f.name == "gb200"]
    return pool, plan.kueue.placements["gb200"]


def _runtime(objects: list[dict], name: str) -> dict:
    (found,) = [o for o in objects if o["kind"] == "ClusterTrainingRuntime" and o["metadata"]["name"] == name]
    return found


def _queue(objects: list[dict]):
    (cq,) = [o for o in objects if o["kind"] == "ClusterQueue"]
    return queue_from_objects(
        cq, [o for o in objects if o["kind"] == "ResourceFlavor"], [o for o in objects if o["kind"] == "Topology"]
    )


def test_the_stack_renders_a_block_runtime_in_slices_of_one_rack(objects):
    pod = runtime_pod(_runtime(objects, "torch-gb200-block"))
    notes = pod["metadata"]["annotations"]
    assert notes[REQUIRED_ANNOTATION] == "cloud.google.com/gce-topology-block"
    assert notes[SLICE_TOPOLOGY_ANNOTATION] == "cloud.google.com/gce-topology-subblock"
    assert notes[SLICE_SIZE_ANNOTATION] == "18"
    one_rack = runtime_pod(_runtime(objects, "torch-gb200"))
    assert one_rack["metadata"]["annotations"][REQUIRED_ANNOTATION] == "cloud.google.com/gce-topology-subblock"
    # the same pods otherwise: node selector, tolerations, RDMA NICs, the namespace's IMEX channel
    assert pod["spec"] == one_rack["spec"]


def test_a_36_node_job_gets_the_block_runtime_is_admitted_and_placeable(capsys, objects, gb200):
    code, docs, err = job_objects(capsys, "--job", "llama-405b", "--nodes", "36")
    assert code == 0, err
    _, runtime, job = docs
    assert runtime["metadata"]["name"] == "torch-gb200-block-llama-405b"
    assert job["spec"]["trainer"]["numNodes"] == 36
    template = runtime_pod(runtime)
    assignment = assign(_queue(objects), podset_from_template("node", 36, template))
    assert assignment.admissible, assignment.why()
    assert assignment.flavors["nvidia.com/gpu"].startswith("gb200")
    pool, placement = gb200
    (flavor,) = [
        o
        for o in objects
        if o["kind"] == "ResourceFlavor" and o["metadata"]["name"] == assignment.flavors["nvidia.com/gpu"]
    ]
    (topology,) = [
        o for o in objects if o["kind"] == "Topology" and o["metadata"]["name"] == flavor["spec"]["topologyName"]
    ]
    assert placement.topology is not None and topology["metadata"]["name"].startswith(placement.topology)
    levels = [lv["nodeLabel"] for lv in topology["spec"]["levels"]]
    nodes = pool_nodes(pool, levels)
    assert len(nodes) == 36 and len({n["cloud.google.com/gce-topology-subblock"] for n in nodes}) == 2
    assert placement_problem(levels, nodes, 1, 36, ask_of(template["metadata"]["annotations"])) is None
    # the one-rack runtime's 36-pod PodSet passes the flavor checks but TAS can never place it
    shared = runtime_pod(_runtime(objects, "torch-gb200"))
    assert assign(_queue(objects), podset_from_template("node", 36, shared)).admissible
    assert "holds at most 18 pods" in placement_problem(levels, nodes, 1, 36, ask_of(shared["metadata"]["annotations"]))


def test_a_one_rack_job_keeps_the_one_rack_runtime(capsys):
    code, docs, err = job_objects(capsys, "--job", "j1", "--nodes", "18")
    assert code == 0, err
    assert docs[1]["metadata"]["name"] == "torch-gb200-j1"


def test_a_gang_of_part_of_a_second_rack_is_refused_with_the_whole_rack_sizes(capsys):
    code, docs, err = job_objects(capsys, "--job", "big", "--nodes", "27")
    assert code == 2 and docs == []
    assert "runs in whole racks" in err and "received: 27" in err
    assert "allowed:  1..18, or a multiple of 18 up to 36" in err and "--nodes 18 or --nodes 36" in err


def test_racks_from_any_reservation_block_cannot_take_a_two_rack_gang(capsys, tmp_path):
    text = (PROJECT_ROOT / f"Pulumi.{STACK}.yaml").read_text()
    assert "        reservationBlock: gb200-block-1" in text
    bad = tmp_path / "Pulumi.anyblock.yaml"
    bad.write_text(text.replace("        reservationBlock: gb200-block-1", ""))
    code = main(["job-objects", "--stack", "anyblock", "--stack-file", str(bad), "--job", "big", "--nodes", "36"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "Kueue could never place this gang on pool gb200" in err and "capacity.reservationBlock" in err


def test_slices_must_divide_the_gang_and_levels_must_exist():
    nodes = [{"b": "0", "s": str(i // 2), "h": str(i)} for i in range(4)]
    assert placement_problem(["b", "s", "h"], nodes, 1, 4, TopologyAsk("b", "s", 2)) is None
    assert "do not split" in placement_problem(["b", "s", "h"], nodes, 1, 3, TopologyAsk("b", "s", 2))
    assert "no level x" in placement_problem(["b", "s", "h"], nodes, 1, 2, TopologyAsk("x"))
    assert "holds at most 2" in placement_problem(["b", "s", "h"], nodes, 1, 3, TopologyAsk("s"))


def test_the_preview_names_the_block_runtime_in_the_pools_placement():
    plan = load_planned(decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{STACK}.yaml")), stack_name=STACK).plan
    (pool,) = [p for p in plan.quota.pools if p.pool == "gb200"]
    assert "required nvlink" in pool.placement
    assert "gangs of whole racks: required block, 18-node slices per rack" in pool.placement
