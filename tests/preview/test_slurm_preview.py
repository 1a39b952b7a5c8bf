"""The offline preview's Slurm section for the 512-GPU example stack, in JSON, text and Markdown."""

from __future__ import annotations

import pytest

from preview.render.markdown import render_markdown
from preview.render.text import render_text
from preview.run import preview_stack
from tests.support.spec.edit import DELETE, edit, edits


@pytest.fixture(scope="module")
def report():
    return preview_stack("gke-h100-512")


def test_slurm_section_data(report):
    s = report.as_dict()["slurm"]
    assert report.exit_code == 0 and s["accounting"] is True
    assert [(p["name"], p["nodes"], p["gpus"], p["default"], p["topology"]) for p in s["partitions"]] == [
        ("h100-mega", 64, 512, False, "h100-mega"),
        ("l4-eval", 8, 16, False, None),
        ("all", 72, 528, True, None),
    ]
    assert [(n["pool"], n["nodeNames"], n["gres"]) for n in s["nodeSets"]] == [
        ("h100-mega", "h100-mega-[0-63]", "gpu:h100:8"),
        ("l4-eval", "l4-eval-[0-7]", "gpu:l4:2"),
    ]
    assert s["blocks"] == [
        {
            "topology": "h100-mega",
            "blockSize": 8,
            "blocks": [f"h100-mega-b{i}" for i in range(8)],
            "blockSizes": [8, 16, 32, 64],
        }
    ]
    assert [(a["name"], a["fairshare"], a["defaultQos"]) for a in s["accounts"]] == [
        ("pretraining", 3, "standard"),
        ("research", 1, "standard"),
    ]
    assert s["priorityWeights"] == {"fairShare": 10000, "age": 1000, "jobSize": 1000, "qos": 2000}
    assert (s["preemptType"], s["preemptMode"]) == ("preempt/qos", "REQUEUE")
    assert s["qos"][0] == {"name": "urgent", "priority": 1000, "preempts": ["standard", "scavenger"]}


def test_slurm_section_in_text_and_markdown(report):
    text = render_text(report, color=False, width=200)
    for needle in (
        "Slurm partitions",
        "h100-mega-[0-63]",
        "gpu:h100:8",
        "8 blocks of 8 nodes",
        "fair-share 10000, age 1000, job size 1000, QOS 2000",
        "preempts standard, scavenger",
        "gres/gpu=144,gres/gpu:h100=128,gres/gpu:l4=16",
    ):
        assert needle in text, needle
    md = render_markdown(report)
    assert "**Slurm** (Slinky)" in md
    assert "| h100-mega | h100-mega | 64 | 512 |  | 1 | h100-mega |" in md
    assert "| pretraining | 3 | urgent, standard, scavenger | standard | gres/gpu:h100=384 |" in md


def test_stacks_without_slurm_have_no_slurm_section():
    assert preview_stack("dev").as_dict()["slurm"] is None


def _kubeflow_twin() -> dict:
    """The 512-GPU stack with the same pools and queues under Kueue (workload kubeflow)."""
    from tests.support.slurm.configs import slurm_configs

    return edits(slurm_configs()["gke-h100-512"], {"scheduling.workload": "kubeflow", "scheduling.slurm": DELETE})


def test_queue_section_shows_what_slurm_reads_and_no_kueue_settings(report):
    data = report.as_dict()["queues"]
    assert (data["queueingStrategy"], data["gangTimeoutSeconds"]) == (None, None)
    assert [p["placement"] for p in data["pools"]] == [
        "partition h100-mega · topology h100-mega: 8 blocks of 8 nodes",
        "partition l4-eval · flat (no topology)",
    ]
    text = render_text(report, color=False, width=250)
    md = render_markdown(report)
    for out in (text, md):
        assert "each queue is a Slurm account with fair-share shares and a GPU cap (GrpTRES) = nominal GPUs" in out
        for kueue_only in ("BestEffortFIFO", "StrictFIFO", "gang admission", "namespace", "lend ≤"):
            assert kueue_only not in out, kueue_only
    queue_header = next(line for line in text.splitlines() if "nominal GPUs" in line and line.startswith("┃"))
    assert [c.strip() for c in queue_header.strip("┃ ").split("┃")] == [
        "account",
        "pool",
        "GPU",
        "nominal GPUs",
        "borrow ≤",
        "$/h",
        "account $/h",
    ]
    assert "| account | pool | GPU | nominal GPUs | borrow ≤ | $/h |" in md
    assert "| l4-eval | L4 | 16 | 16 | 100% | partition l4-eval · flat (no topology) |" in md


def test_the_kueue_twin_still_shows_kueue_settings():
    from preview.run import preview_config

    twin = preview_config("twin", _kubeflow_twin())
    text = render_text(twin, color=False, width=250)
    assert "BestEffortFIFO · gang admission: all pods ready within 600 s" in text and "namespace" in text
    assert twin.as_dict()["queues"]["queueingStrategy"] == "BestEffortFIFO"


def test_cost_at_min_of_a_scaling_slurm_pool_is_its_min_nodes(report):
    """l4-eval (0-8) follows the queue (slurm.scaling on by default): $/h min = minNodes, no pinned-pool note."""
    cost = report.as_dict()["cost"]
    l4 = {p["pool"]: p for p in cost["pools"]}["l4-eval"]
    assert (l4["min_nodes"], l4["max_nodes"], l4["usd_per_hour_min"]) == (0, 8, 0.0)
    assert not any("priced at maxNodes" in n for n in cost["notes"])
    assert report.as_dict()["slurm"]["scaling"] == {
        "pools": ["l4-eval"],
        "idleSeconds": 600,
        "resumeTimeoutSeconds": 1200,
    }
    assert (
        "follows the queue (Slurm power saving scales the NodeSet): l4-eval 0-8 nodes · released after 10 min "
        "idle · a resumed node must register within 20 min"
    ) in render_text(report, color=False, width=250)


def test_cost_at_min_of_a_slurm_pool_without_scaling_is_its_max_nodes():
    """With slurm.scaling.enabled: false a NodeSet runs maxNodes slurmd pods, so the pool never scales below
    maxNodes: $/h min = $/h max, with a note saying why."""
    from preview.run import preview_config
    from tests.support.slurm.configs import slurm_configs

    pinned = preview_config("p", edit(slurm_configs()["gke-h100-512"], "scheduling.slurm.scaling", {"enabled": False}))
    cost = pinned.as_dict()["cost"]
    l4 = {p["pool"]: p for p in cost["pools"]}["l4-eval"]
    assert l4["usd_per_hour_min"] == pytest.approx(8 * l4["usd_per_node_hour"]) == l4["usd_per_hour_max"]
    assert all(p["usd_per_hour_min"] == p["usd_per_hour_max"] for p in cost["pools"])
    # only the system pool (1 → 3 × e2-standard-4 in us-east4, priced since every region prices it) still autoscales
    system = next(f for f in cost["fixed"] if f["item"].startswith("system pool"))
    assert system["usd_per_hour_max"] - system["usd_per_hour_min"] == pytest.approx(2 * 0.150942)
    assert cost["totals"]["usdPerHourMax"] - cost["totals"]["usdPerHourMin"] == pytest.approx(2 * 0.150942, abs=1e-4)
    assert any(n.startswith("$/h min of l4-eval (0 → 8) is priced at maxNodes") for n in cost["notes"])
    assert "$/h min of l4-eval (0 → 8) is priced at maxNodes" in render_text(pinned, color=False, width=250)
    # the same pools under Kueue scale to zero
    twin = {p["pool"]: p for p in preview_config("twin", _kubeflow_twin()).as_dict()["cost"]["pools"]}
    assert twin["l4-eval"]["usd_per_hour_min"] == 0.0


def test_the_stack_diff_prices_a_slurm_pool_at_max_nodes_at_min():
    """Raising minNodes of a Slurm pool changes nothing in cost (it already runs at maxNodes); the diff agrees."""
    from preview.diff.cost import diff_cost
    from preview.run import preview_config
    from tests.support.slurm.configs import slurm_configs

    base = edit(slurm_configs()["gke-h100-512"], "scheduling.slurm.scaling", {"enabled": False})
    head = edit(base, "nodePools[1].minNodes", 8)
    before, after = preview_config("b", base).cost, preview_config("h", head).cost
    diff = diff_cost(before, after)
    assert diff.delta_min == pytest.approx(0) and diff.delta_max == pytest.approx(0)
    assert before.usd_per_hour_min == pytest.approx(after.usd_per_hour_min)


def test_qos_limits_show_in_the_preview_for_the_limited_class_only():
    from preview.run import preview_config
    from tests.support.slurm.configs import slurm_configs

    cfg = edit(
        slurm_configs()["gke-h100-512"],
        "scheduling.slurm.qosLimits",
        {"scavenger": {"maxWallMinutes": 720, "maxGpusPerUser": 16}},
    )
    limited = preview_config("limited", cfg)
    qos = {q["name"]: q for q in limited.as_dict()["slurm"]["qos"]}
    assert qos["scavenger"]["limits"] == {"maxWallMinutes": 720, "maxGpusPerUser": 16}
    assert "limits" not in qos["urgent"]
    text = render_text(limited, color=False, width=200)
    assert "preempts nothing; MaxWall 720 min, 16 GPUs per user" in text
    assert "preempts nothing (MaxWall 720 min, 16 GPUs per user)" in render_markdown(limited)
