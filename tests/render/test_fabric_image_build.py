"""Slurm on EFA: the NodeSet's slurmd image must carry libfabric + aws-ofi-nccl (tasks run in slurmd's container).

``fabric.runtimeImageBuild: slurmd-efa`` names an image built from ``images/slurmd-efa/Dockerfile`` by digest; the
contract then takes its libraries from the recipe's catalog row (``catalog/data/image-builds.csv``), and the NodeSet
checks the image itself first (``fabric-image-check``). Covered here: the settings refused (all at once), what the
NodeSet renders, the contract's verdict on the built image and on each way it can be wrong, the check script run by
a real ``sh`` on a good and a bad image layout, the recipe equal to its catalog row, and the arm64 (GB200) default of
the ``torch-<pool>`` runtime on EFA."""

from __future__ import annotations

import copy
import os
import re
import shutil
import stat
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from catalog import load_catalog
from catalog.fabric import FabricKind, load_fabric_catalog
from catalog.fabric_images import BUILD_ANNOTATION, CHECK_CONTAINER, load_fabric_image_tables
from catalog.images import load_image_table
from stacks.plan.fabric_contract import check
from stacks.plan.process_view import nodeset_views, runtime_views
from stacks.plan.facts import pool_facts
from stacks.plan.slurm import plan_slurm
from stacks.spec.stack import StackSpec
from preview.engine import PROJECT_ROOT, read_stack_file
from render.fabric_image_check import check_script
from render.fabric_pod import pod_fabric
from render.kueue import render_kueue
from render.slurm_values import chart_image, slurm_values
from render.trainer import training_runtimes
from tests.support.spec.edit import edit
from tests.support.spec.scheduling_fixtures import EKS_TEAMS, spec_and_facts
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

BUILD = load_fabric_image_tables().build("slurmd-efa")
REPO = "123456789012.dkr.ecr.us-east-1.amazonaws.com/slurmd-efa"
DIGEST = "sha256:" + "ab" * 32
BUILT = f"{REPO}@{DIGEST}"
SLURM = {"workload": "slurm", "queues": [{"name": "team", "quotas": [{"pool": "p5", "gpus": 8}]}]}
EFA_RUNTIME = {"mode": "device-plugin", "efaDevicePlugin": True}


def _slurm_raw(fabric: dict) -> dict:
    raw = {**copy.deepcopy(EKS_TEAMS), "gpuRuntime": EFA_RUNTIME, "scheduling": copy.deepcopy(SLURM)}
    return edit(raw, "nodePools[0].fabric", fabric)


def _nodeset_values(raw: dict) -> dict:
    spec, facts = spec_and_facts(raw)
    return slurm_values(plan_slurm(spec.scheduling, facts), "ml", fabrics={p.name: pod_fabric(p) for p in facts})


def _p5_view(values: dict):
    return next(v for v in nodeset_views(values) if v.pool == "p5")


def _image_outcome(values: dict):
    result = check(_p5_view(values), FabricKind.EFA, "p5.48xlarge", 32)
    return next(o for o in result.outcomes if o.requirement.id == "efa-image")


def test_the_built_image_by_digest_renders_with_its_check_first_and_meets_the_contract():
    values = _nodeset_values(_slurm_raw({"runtimeImageBuild": "slurmd-efa", "runtimeImage": BUILT}))
    nodeset = values["nodesets"]["p5"]
    assert nodeset["slurmd"]["image"] == {"repository": REPO, "digest": DIGEST}  # the chart's digest form
    assert nodeset["metadata"]["annotations"] == {BUILD_ANNOTATION: "slurmd-efa"}
    first = nodeset["podSpec"]["initContainers"][0]
    assert (first["name"], first["image"]) == (CHECK_CONTAINER, BUILT)
    outcome = _image_outcome(values)
    assert outcome.met and "built from images/slurmd-efa/Dockerfile" in outcome.observed
    # (the env comes through the TaskProlog, wired by the stack: the full contract is the examples' test)
    assert "efa-image" not in {
        o.requirement.id for o in check(_p5_view(values), FabricKind.EFA, "p5.48xlarge", 32).unmet
    }


def test_without_an_image_validation_refuses_what_slinkys_slurmd_image_would_run_over_tcp():
    """Nothing named: validation refuses the pool (exit 2, naming images/slurmd-efa) instead of letting the pack flag
    a default the user never wrote; the NodeSet it would have rendered, on Slinky's image, is what the contract
    judges a TCP fallback."""
    with pytest.raises(SpecError) as info:
        load_spec(copy.deepcopy(_slurm_raw({})))
    [refusal] = [e for e in info.value.errors if not e.warning]
    assert refusal.path == "gpu-cluster:nodePools[0].fabric.runtimeImage" and "images/slurmd-efa" in refusal.fix
    spec = StackSpec.model_validate(_slurm_raw({}), by_alias=True, by_name=False)  # past validation, unchecked
    facts = [pool_facts(spec, p, load_catalog()) for p in spec.node_pools]
    values = slurm_values(plan_slurm(spec.scheduling, facts), "ml", fabrics={p.name: pod_fabric(p) for p in facts})
    outcome = _image_outcome(values)
    assert not outcome.met and outcome.observed.startswith("image ghcr.io/slinkyproject/slurmd")


@pytest.mark.parametrize(
    "change,observed",
    [
        # the recipe's base itself, claimed as the build: known to lack the plugin, whatever the claim says
        (
            lambda ns: ns["slurmd"].update(image={"repository": "ghcr.io/slinkyproject/slurmd", "digest": DIGEST}),
            "has no libfabric",
        ),
        # a tag can move after the check: not the build the row vouches for
        (lambda ns: ns["slurmd"].update(image={"repository": REPO, "tag": "26.05"}), "not pinned by digest"),
        # no start check, or one that runs after another container: nothing proves the image is the build
        (lambda ns: ns["podSpec"]["initContainers"].pop(0), f"no {CHECK_CONTAINER} init container"),
        (
            lambda ns: ns["podSpec"]["initContainers"].insert(0, {"name": "other", "image": "alpine"}),
            f"no {CHECK_CONTAINER} init container",
        ),
        # the check runs another image than slurmd's
        (
            lambda ns: ns["podSpec"]["initContainers"][0].update(image=f"{REPO}@sha256:{'cd' * 32}"),
            f"no {CHECK_CONTAINER} init container",
        ),
        # no claim at all: an image nobody vouches for
        (lambda ns: ns.pop("metadata"), "no catalog row says it has"),
    ],
    ids=["base-image", "by-tag", "no-check", "check-not-first", "check-other-image", "no-annotation"],
)
def test_each_way_the_build_claim_can_be_wrong_is_unmet(change, observed):
    values = _nodeset_values(_slurm_raw({"runtimeImageBuild": "slurmd-efa", "runtimeImage": BUILT}))
    change(values["nodesets"]["p5"])
    outcome = _image_outcome(values)
    assert not outcome.met and observed in outcome.observed, outcome.observed


def test_build_settings_that_cannot_be_vouched_for_are_refused_all_at_once():
    raw = _slurm_raw({"runtimeImageBuild": "slurmd-efa", "runtimeImage": f"{REPO}:26.05@{DIGEST}"})
    raw["nodePools"][1]["fabric"] = {"runtimeImageBuild": "slurmd-efa"}  # g6e: no fabric, no image
    with pytest.raises(SpecError) as exc:
        load_spec(raw)
    got = [str(e).splitlines()[0] for e in exc.value.errors]
    assert got == [
        "error: gpu-cluster:nodePools[0].fabric.runtimeImage: pool 'p5': an image built from a recipe must be named "
        "by digest, so what runs is what was built",
        "error: gpu-cluster:nodePools[1].fabric.runtimeImage: pool 'l40s': runtimeImageBuild slurmd-efa names the "
        "recipe of runtimeImage, which is unset",
        "error: gpu-cluster:nodePools[1].fabric.runtimeImageBuild: pool 'l40s': recipe slurmd-efa is for EFA pools, "
        "and g6e.xlarge has no fabric",
    ], got


def test_the_recipe_on_a_kubeflow_stack_or_on_its_own_base_image_is_refused():
    kubeflow = edit(
        {**copy.deepcopy(EKS_TEAMS), "gpuRuntime": EFA_RUNTIME},
        "nodePools[0].fabric",
        {"runtimeImageBuild": "slurmd-efa", "runtimeImage": f"ghcr.io/slinkyproject/slurmd@{DIGEST}"},
    )
    with pytest.raises(SpecError) as exc:
        load_spec(kubeflow)
    assert [str(e).splitlines()[0].split(": ", 2)[1:] for e in exc.value.errors] == [
        [
            "gpu-cluster:nodePools[0].fabric.runtimeImage",
            "pool 'p5': this image is known to have no libfabric (EFA "
            "provider) and aws-ofi-nccl, so it was not built from images/slurmd-efa/Dockerfile",
        ],
        [
            "gpu-cluster:nodePools[0].fabric.runtimeImageBuild",
            "pool 'p5': recipe slurmd-efa builds a slurmd image, which only a Slurm NodeSet runs",
        ],
    ]


@pytest.mark.parametrize(
    "image,want",
    [
        (BUILT, {"repository": REPO, "digest": DIGEST}),
        (f"{REPO}:1.2", {"repository": REPO, "tag": "1.2"}),
        ("localhost:5000/slurmd", {"repository": "localhost:5000/slurmd"}),
        (f"localhost:5000/slurmd@{DIGEST}", {"repository": "localhost:5000/slurmd", "digest": DIGEST}),
    ],
)
def test_chart_image_splits_repository_tag_and_digest(image, want):
    assert chart_image(image) == want


# --- the start check, run by a real sh ------------------------------------------------------------------------------


def _fake_image(root: Path, marker: str | None, libs: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """A marker file and an ``ldconfig`` that prints a cache listing ``libs`` (the real ``ldconfig -p`` format)."""
    (root / "bin").mkdir(parents=True)
    if marker is not None:
        (root / "image-build").write_text(marker)
    listing = "".join(f"\t{lib} (libc6,AArch64) => /opt/amazon/x/{lib}\\n" for lib in libs)
    ldconfig = root / "bin" / "ldconfig"
    ldconfig.write_text(f"#!/bin/sh\nprintf '{len(libs)} libs found in cache `/etc/ld.so.cache'\"'\"'\\n{listing}'\n")
    ldconfig.chmod(ldconfig.stat().st_mode | stat.S_IXUSR)
    script = check_script(replace(BUILD, marker=str(root / "image-build")))
    return script, {**os.environ, "PATH": f"{root / 'bin'}:{os.environ['PATH']}"}


@pytest.mark.parametrize(
    "marker,libs,ok,stderr",
    [
        ("build=slurmd-efa\nefa_installer=1.42.0\n", ("libfabric.so.1", "libnccl-net.so"), True, ""),
        (None, ("libfabric.so.1", "libnccl-net.so"), False, "was not built from images/slurmd-efa/Dockerfile"),
        ("build=other\n", ("libfabric.so.1", "libnccl-net.so"), False, "was not built from"),
        ("build=slurmd-efa\n", ("libfabric.so.1",), False, "libnccl-net.so is not on the dynamic loader path"),
        ("build=slurmd-efa\n", ("libfabric.so.1.27", "libnccl-net.so"), False, "libfabric.so.1 is not on"),
    ],
    ids=["good", "no-marker", "other-build", "no-plugin", "only-a-similar-name"],
)
def test_the_check_script_passes_only_the_built_image(tmp_path, marker, libs, ok, stderr):
    if shutil.which("sh") is None or shutil.which("awk") is None:
        pytest.skip("needs sh and awk")
    script, env = _fake_image(tmp_path, marker, libs)
    run = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert (run.returncode == 0) == ok, run.stderr
    assert stderr in run.stderr


@pytest.mark.parametrize(
    "libraries,ok", [(("libc.so.6",), True), (("libc.so",), False), (("libnot-here.so.1",), False)]
)
def test_the_check_reads_the_real_loader_cache_format(tmp_path, libraries, ok):
    """This machine's own ``ldconfig -p`` (not a fake): the script finds a library by its exact name only."""
    ldconfig = shutil.which("ldconfig") or shutil.which("ldconfig", path="/sbin:/usr/sbin")
    if (
        ldconfig is None
        or shutil.which("awk") is None
        or "\tlibc.so.6 (" not in subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
    ):
        pytest.skip("needs a glibc ldconfig whose cache lists libc.so.6")
    (tmp_path / "image-build").write_text("build=slurmd-efa\n")
    script = check_script(replace(BUILD, marker=str(tmp_path / "image-build")), libraries)
    env = {**os.environ, "PATH": f"{Path(ldconfig).parent}:{os.environ['PATH']}"}
    run = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert (run.returncode == 0) == ok, run.stderr


# --- the recipe and its catalog row ----------------------------------------------------------------------------------

DOCKERFILE = PROJECT_ROOT / BUILD.dockerfile


def _arg(name: str) -> str:
    m = re.search(rf"^ARG {name}=(\S+)$", DOCKERFILE.read_text(), re.MULTILINE)
    assert m, f"{BUILD.dockerfile} has no ARG {name}=…"
    return m.group(1)


def test_the_recipe_pins_what_its_catalog_row_says():
    text = DOCKERFILE.read_text()
    assert _arg("SLURMD_IMAGE") == BUILD.base_image and re.search(r"^FROM \$\{SLURMD_IMAGE\}$", text, re.MULTILINE)
    assert _arg("EFA_INSTALLER_VERSION") == BUILD.efa_installer_version
    assert _arg("EFA_INSTALLER_SHA256") == BUILD.efa_installer_sha256 and re.fullmatch(
        "[0-9a-f]{64}", BUILD.efa_installer_sha256
    )
    assert "sha256sum --check --strict" in text  # the tarball is verified before the installer runs
    assert "--skip-kmod" in text and "--skip-limit-conf" in text and "--no-verify" in text
    assert f"> {BUILD.marker}" in text and "build=slurmd-efa" in text  # what fabric-image-check reads
    assert BUILD.architectures == {"amd64", "arm64"} and "linux/amd64,linux/arm64" in text


def test_the_recipes_base_is_the_pinned_slurm_release_and_a_known_gap():
    base = load_image_table().lookup(BUILD.base_image.replace("ubuntu24.04", "ubuntu26.04"))
    assert base is not None and base.supports("arm64"), "the chart's own slurmd tag is multi-arch"
    assert load_fabric_catalog().image_gap(FabricKind.EFA, BUILD.base_image) is not None


def test_the_recipes_shell_steps_parse():
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    for step in re.findall(r"^RUN (.+)$", text, re.MULTILINE):
        run = subprocess.run(["bash", "-n", "-o", "pipefail", "-c", step], capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, f"{step[:80]}…: {run.stderr}"


# --- the torch-<pool> runtime on an arm64 EFA pool (GB200) ----------------------------------------------------------


def test_an_arm64_efa_runtime_defaults_to_the_arm64_deep_learning_container():
    flat = read_stack_file(PROJECT_ROOT / "Pulumi.eks-p6e-gb200.yaml")
    raw = {k.split(":", 1)[1]: v for k, v in flat.items() if k.startswith("gpu-cluster:")}
    raw["nodePools"][0].pop("fabric")
    raw["scheduling"] = {
        "workload": "kubeflow",
        "queues": [{"name": "pretraining", "quotas": [{"pool": "gb200", "gpus": 72}]}],
    }
    spec, facts = spec_and_facts(raw)
    runtime = training_runtimes(facts, render_kueue(spec.scheduling, facts).placements)[0]
    view = runtime_views(runtime)[0]
    want = load_fabric_catalog().image(FabricKind.EFA, "training-image-arm64").reference
    assert view.image == want and load_image_table().lookup(want).supports("arm64")
    assert not load_image_table().lookup("pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime").supports("arm64")
    result = check(view, FabricKind.EFA, "p6e-gb200.36xlarge", 4)  # 4 EFA-only: card 0 is the ENA interface
    assert result.unmet == [], [(o.requirement.id, o.observed) for o in result.unmet]


def test_the_contracts_default_slurmd_image_is_the_pinned_charts():
    from stacks.plan.process_view import SLINKY_SLURMD_IMAGE
    from tests.conftest import require_shared
    import yaml

    values = yaml.safe_load(require_shared("charts", "slurm-1.2.1", "values.yaml").read_text())
    image = values["nodesetDefaults"]["slurmd"]["image"]
    assert f"{image['repository']}:{image['tag']}" == SLINKY_SLURMD_IMAGE
