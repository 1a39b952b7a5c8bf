"""Kueue's pods-ready timeout on rack-scale (ComputeDomain) pools follows the preview's own cold-start estimate: left
unset it is raised to the largest cold gang x 1.5 (rounded up to a minute), rendered into Kueue's configuration and
shown in the preview; set below the estimate it is refused (exit 2) naming both figures; stacks without such pools
keep the spec's value."""

from __future__ import annotations

import copy

import pytest
import yaml

from preview.__main__ import main
from preview.engine import read_stack_file
from stacks.validate.issues import SpecError
from stacks.validate.load import decode_config, load_spec
from stacks.validate.planned import load_planned
from tests.conftest import PROJECT_ROOT
from tests.support.helm.examples import recording

A4X = "gke-a4x-nvl72"


def _config(stack: str) -> dict:
    return read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")


def _with_timeout(seconds: int) -> dict:
    cfg = copy.deepcopy(_config(A4X))
    cfg["gpu-cluster:scheduling"]["gang"] = {"timeoutSeconds": seconds}
    return cfg


def test_an_unset_timeout_is_raised_to_the_two_rack_cold_start_with_a_margin():
    timeout = load_planned(decode_config(_config(A4X))).plan.kueue.pods_ready_timeout
    assert timeout.estimate_s == pytest.approx(629.9) and timeout.pool == "gb200"  # 36 pods, both racks
    assert timeout.derived and timeout.seconds == 960  # 629.9 x 1.5 = 944.9, up to a whole minute
    assert load_planned(decode_config(_config(A4X))).plan.quota.gang_timeout_seconds == 960


def test_the_raised_timeout_is_what_kueue_runs_with():
    (release,) = [
        r for r in recording(A4X).resources if r.type == "kubernetes:helm.sh/v3:Release" and r.name == "kueue-chart"
    ]
    config = yaml.safe_load(release.redacted_inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"]["timeout"] == "960s"


def test_the_preview_shows_the_timeout_and_where_it_comes_from(capsys):
    assert main(["--stack", A4X, "--no-policies"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "gang admission: all pods ready within 960 s" in out
    assert "waitForPodsReady 960 s: this cold start x 1.5" in out
    assert "cold start over waitForPodsReady" not in out


def test_a_set_timeout_below_the_cold_start_is_refused_naming_both_figures():
    with pytest.raises(SpecError) as caught:
        load_spec(decode_config(_with_timeout(600)))
    (issue,) = caught.value.errors
    text = str(issue)
    assert "gpu-cluster:scheduling.gang.timeoutSeconds" in text
    assert "(600 s) is below the cold start of pool gb200's largest gang (629.9 s" in text
    assert "received: 600" in text and "at least 629.9 s" in text and "timeoutSeconds: 960" in text


def test_a_set_timeout_below_the_cold_start_exits_2_and_creates_nothing(capsys, tmp_path):
    path = tmp_path / "Pulumi.short.yaml"
    path.write_text(yaml.safe_dump({"config": _with_timeout(600)}))
    assert main(["--stack", "short", "--stack-file", str(path)]) == 2
    out = capsys.readouterr().out
    assert "629.9 s" in out and "Nothing was created" in out


def test_a_set_timeout_above_the_cold_start_is_kept_as_set():
    timeout = load_planned(decode_config(_with_timeout(700))).plan.kueue.pods_ready_timeout
    assert (timeout.seconds, timeout.derived, timeout.configured) == (700, False, True)


def test_stacks_without_rack_scale_pools_keep_the_spec_value():
    timeout = load_planned(decode_config(_config("gke-kueue"))).plan.kueue.pods_ready_timeout
    assert timeout.estimate_s is None and not timeout.derived
    assert timeout.seconds == load_spec(decode_config(_config("gke-kueue")))[0].scheduling.gang.timeout_seconds
