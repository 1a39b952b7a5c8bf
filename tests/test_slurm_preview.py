"""The offline preview's Slurm section for the 512-GPU example stack, in JSON, text and Markdown."""
from __future__ import annotations

import pytest

from preview.render_markdown import render_markdown
from preview.render_text import render_text
from preview.run import preview_stack


@pytest.fixture(scope="module")
def report():
    return preview_stack("gke-h100-512")


def test_slurm_section_data(report):
    s = report.as_dict()["slurm"]
    assert report.exit_code == 0 and s["accounting"] is True
    assert [(p["name"], p["nodes"], p["gpus"], p["default"], p["topology"]) for p in s["partitions"]] == [
        ("h100-mega", 64, 512, False, "h100-mega"), ("l4-eval", 8, 16, False, None), ("all", 72, 528, True, None)]
    assert [(n["pool"], n["nodeNames"], n["gres"]) for n in s["nodeSets"]] == [
        ("h100-mega", "h100-mega-[0-63]", "gpu:h100:8"), ("l4-eval", "l4-eval-[0-7]", "gpu:l4:2")]
    assert s["blocks"] == [{"topology": "h100-mega", "blockSize": 8, "blocks": [f"h100-mega-b{i}" for i in range(8)],
                            "blockSizes": [8, 16, 32, 64]}]
    assert [(a["name"], a["fairshare"], a["defaultQos"]) for a in s["accounts"]] == [
        ("pretraining", 3, "standard"), ("research", 1, "standard")]
    assert s["priorityWeights"] == {"fairShare": 10000, "age": 1000, "jobSize": 1000, "qos": 2000}
    assert (s["preemptType"], s["preemptMode"]) == ("preempt/qos", "REQUEUE")
    assert s["qos"][0] == {"name": "urgent", "priority": 1000, "preempts": ["standard", "scavenger"]}


def test_slurm_section_in_text_and_markdown(report):
    text = render_text(report, color=False, width=200)
    for needle in ("Slurm partitions", "h100-mega-[0-63]", "gpu:h100:8", "8 blocks of 8 nodes",
                   "fair-share 10000, age 1000, job size 1000, QOS 2000", "preempts standard, scavenger",
                   "gres/gpu:h100=128,gres/gpu:l4=16"):
        assert needle in text, needle
    md = render_markdown(report)
    assert "**Slurm** (Slinky)" in md
    assert "| h100-mega | h100-mega | 64 | 512 |  | 1 | h100-mega |" in md
    assert "| pretraining | 3 | urgent, standard, scavenger | standard | gres/gpu:h100=384 |" in md


def test_stacks_without_slurm_have_no_slurm_section():
    assert preview_stack("dev").as_dict()["slurm"] is None
