"""The slurmd-efa build through the policy pack, on the recorded eks-p6e-gb200 example (an arm64 EFA pool on Slurm):
with its start check first, the built image passes both ``cross-layer-fabric-contract`` (libfabric + aws-ofi-nccl,
from the recipe's catalog row) and ``topology-arm64-images`` (amd64 + arm64, from the same row); without the check,
nothing vouches for the image and both rules refuse it; Slinky's own slurmd image is refused by the contract."""

from __future__ import annotations

import copy

import pytest

from catalog.fabric_images import CHECK_CONTAINER
from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from tests.support.policy.harness import Pack, with_props, wire

ARM, CONTRACT = "topology-arm64-images", "cross-layer-fabric-contract"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


@pytest.fixture(scope="module")
def p6e():
    return tuple(run_program(read_stack_file(PROJECT_ROOT / "Pulumi.eks-p6e-gb200.yaml"), "eks-p6e-gb200").resources)


def _ours(diags, *rules):
    return [d for d in diags if d[0] in rules]


def _edit_nodeset(p6e, change):
    out = [copy.deepcopy(r) for r in p6e]
    (release,) = [r for r in out if r.type == "kubernetes:helm.sh/v3:Release" and r.name == "slurm-slurm"]
    props = wire(release)
    change(props["values"]["nodesets"]["gb200"])
    return [with_props(r, props) if r is release else r for r in out]


def test_the_built_image_with_its_check_passes_both_rules(pack, p6e):
    assert _ours(pack.stack(list(copy.deepcopy(p6e))), ARM, CONTRACT) == []


def test_without_its_start_check_nothing_vouches_for_the_built_image(pack, p6e):
    def drop_check(ns):
        ns["podSpec"]["initContainers"] = [c for c in ns["podSpec"]["initContainers"] if c["name"] != CHECK_CONTAINER]

    diags = pack.stack(_edit_nodeset(p6e, drop_check))
    (arm,) = _ours(diags, ARM)
    assert "images not in catalog/data/image-architectures.csv: " in arm[2] and "slurmd-efa@sha256:" in arm[2]
    (contract,) = _ours(diags, CONTRACT)
    assert contract[1] == "mandatory" and f"no {CHECK_CONTAINER} init container checks it first" in contract[2]


def test_slinkys_own_slurmd_image_is_refused_by_the_contract(pack, p6e):
    def slinky(ns):
        ns["slurmd"]["image"] = {"repository": "ghcr.io/slinkyproject/slurmd", "tag": "26.05-ubuntu26.04"}
        ns["podSpec"]["initContainers"] = [c for c in ns["podSpec"]["initContainers"] if c["name"] != CHECK_CONTAINER]
        ns.pop("metadata")

    (contract,) = _ours(pack.stack(_edit_nodeset(p6e, slinky)), CONTRACT)
    assert (
        "image ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04 has no libfabric (EFA provider) and aws-ofi-nccl"
        in contract[2]
    )
