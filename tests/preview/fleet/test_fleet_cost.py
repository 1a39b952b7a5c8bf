"""Honest money in the fleet roll-up: a worker whose price is unknown (a capacity block without its fee) is unknown in
every format, never $0 — the sums say "+ unknown", the blended $/GPU-h is unknown, and the manager's preview exits
as that worker's own preview does (its fail-closed cost findings carried over); what no figure includes is named."""

from __future__ import annotations

import json
import shutil

import yaml

from preview.__main__ import render_report
from preview.engine import PROJECT_ROOT
from preview.fleet.stack_files import FolderStackFiles
from preview.run import preview_config, preview_stack
from tests.support.spec.fleet_configs import stack_config


def _unpriced_eks(tmp_path):
    for name in ("fleet-eks", "fleet-gke"):
        shutil.copy(PROJECT_ROOT / f"Pulumi.{name}.yaml", tmp_path / f"Pulumi.{name}.yaml")
    path = tmp_path / "Pulumi.fleet-eks.yaml"
    doc = yaml.safe_load(path.read_text())
    del doc["config"]["gpu-cluster:nodePools"][0]["capacity"]["upfrontFeeUsd"]  # p5's cost is now unknown
    path.write_text(yaml.safe_dump(doc))
    return FolderStackFiles(tmp_path), preview_config("fleet-eks", yaml.safe_load(path.read_text())["config"])


def test_a_worker_of_unknown_price_is_unknown_in_every_format_and_fails_as_it_fails_alone(tmp_path):
    files, alone = _unpriced_eks(tmp_path)
    assert alone.exit_code == 1 and alone.cost.unpriced == ["p5"]  # the worker by itself fails closed
    rep = preview_config("fleet", stack_config("fleet"), stack_files=files)
    assert rep.exit_code == alone.exit_code
    carried = [v for v in rep.violations if v["message"].startswith("worker 'eks' (stack fleet-eks): ")]
    assert {v["policy"] for v in carried} <= {"cost-stack-budget", "cost-gpu-hour-limit"} and carried
    totals = rep.fleet["totals"]
    assert totals["complete"] is False and totals["unpricedPools"] == ["eks/p5"]
    assert totals["blendedUsdPerGpuHour"] is None  # not the priced pools' $/h spread over unpriced GPUs
    eks = next(c for c in rep.fleet["clusters"] if c["name"] == "eks")
    assert eks["complete"] is False and eks["unpricedPools"] == ["p5"]
    text = " ".join(render_report(rep, "text").split())
    assert (
        f"{totals['usdPerHourMax']:,.2f} + unknown" in text and "blended $/GPU-h unknown: no price for eks/p5" in text
    )
    markdown = render_report(rep, "markdown")
    assert f"**{totals['usdPerHourMax']:,.2f} + unknown**" in markdown and "no price for eks/p5" in markdown
    doc = json.loads(render_report(rep, "json"))["fleet"]["totals"]
    assert doc["complete"] is False and doc["blendedUsdPerGpuHour"] is None


def test_the_priced_example_names_what_no_figure_counts():
    fleet = preview_stack("fleet").fleet
    assert fleet["totals"]["complete"] is True and fleet["totals"]["blendedUsdPerGpuHour"] is not None
    notes = " ".join(fleet["notes"])
    assert "not counted: the manager's 1 reserved static external address" in notes
    assert "not counted: traffic between clouds and regions" in notes
    assert "eks: capacity block p5: $274,869.50 paid up front" in notes  # a worker's convention note carried over
