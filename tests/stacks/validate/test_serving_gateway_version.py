"""GKE serving routes through InferencePools whose CRD GKE installs itself from one version on (gpu-cluster does not
create it there: a second create fails with AlreadyExists). A created cluster must pin a version at or above that
floor; each case reads what the user sees: the path, the version received, the floor and its source."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.cloud_limits import cloud_limit
from preview.engine import PROJECT_ROOT, read_stack_file
from stacks.validate.issues import SpecError, SpecIssue
from stacks.validate.load import decode_config, load_spec
from tests.support.spec.edit import DELETE, edits

GKE = decode_config(read_stack_file(PROJECT_ROOT / "Pulumi.gke-serving.yaml"))
VERSION = ("cluster", "minMasterVersion")
FLOOR = cloud_limit("gke-inference-pool-crd-managed")


def _version_issues(raw: dict[str, Any]) -> tuple[list[SpecIssue], list[SpecIssue]]:
    try:
        _, warnings = load_spec(raw)
        errors: list[SpecIssue] = []
    except SpecError as exc:
        errors, warnings = exc.errors, [i for i in exc.issues if i.warning]
    mine = [i for i in errors if "InferencePool" in i.problem], [i for i in warnings if "InferencePool" in i.problem]
    return mine


def test_the_floor_is_the_sourced_gke_version():
    assert FLOOR.value == "1.34.0-gke.1626000" and "llm-d" in FLOOR.source and "#2926" in FLOOR.source


def test_the_example_pins_a_version_at_or_above_the_floor():
    assert _version_issues(GKE) == ([], [])


def test_an_unpinned_gke_serving_cluster_is_refused_naming_the_floor():
    errors, _ = _version_issues(edits(GKE, {VERSION: DELETE}))
    (e,) = errors
    assert e.path == "gpu-cluster:cluster.minMasterVersion"
    assert "release channel picks the version" in e.problem and FLOOR.source in e.problem
    assert e.allowed == "1.34.0-gke.1626000 or later" and "REGULAR" in e.fix


@pytest.mark.parametrize("version", ["1.33", "1.33.5-gke.1080000", "1.34.0-gke.1500000"])
def test_a_version_below_the_floor_is_refused_with_the_value_received(version):
    errors, _ = _version_issues(edits(GKE, {VERSION: version}))
    (e,) = errors
    assert e.value == version and f"{version} is below" in e.problem and e.allowed == "1.34.0-gke.1626000 or later"


@pytest.mark.parametrize("version", ["1.34.0-gke.1626000", "1.34.1", "1.35", "latest"])
def test_a_version_at_or_above_the_floor_passes(version):
    assert _version_issues(edits(GKE, {VERSION: version})) == ([], [])


@pytest.mark.parametrize("version", ["1.34", "1.34.0"])
def test_a_version_that_leaves_the_build_to_gke_is_flagged_not_refused(version):
    errors, warnings = _version_issues(edits(GKE, {VERSION: version}))
    assert errors == [] and [w.value for w in warnings] == [version]
    assert "leaves the patch to GKE" in warnings[0].problem


def test_serving_on_an_existing_gke_cluster_warns_that_the_crd_must_already_be_there():
    raw = edits(GKE, {VERSION: DELETE, ("cluster", "mode"): "existing"})
    errors, warnings = _version_issues(raw)
    assert errors == []
    (w,) = warnings
    assert w.path == "gpu-cluster:cluster.mode" and "does not install the InferencePool CRD" in w.problem
