"""The what-if's import floor (bench/whatif_bench.py): a run loads the modules its own stack needs and not the rest.
Each case runs ``python -m whatif`` in a fresh interpreter and reads ``sys.modules`` at the end: a Kueue stack never
loads the Slurm model or planner, the other cloud's pool planner, the fleet model, the trace readers or the pods'
fabric and admission renderers; a Slurm stack never loads the Kueue model; nothing loads Pulumi, the components, the
policy pack, the preview, jsonschema or the Kubernetes client. Each case also names modules that must be there, so a
run that loaded nothing (or a broken probe) cannot pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, runpy, sys
sys.argv = ["whatif", *sys.argv[1:]]
try:
    runpy.run_module("whatif", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""
NEVER = (
    "pulumi",
    "pulumi_gcp",
    "pulumi_aws",
    "pulumi_kubernetes",
    "components",
    "compose",
    "policies",
    "preview",
    "jsonschema",
    "kubernetes",
    "matplotlib",
)
"""Never in a what-if run (the chart's matplotlib only with --chart)."""
SLURM_ONLY = (
    "whatif.slurm.sched",
    "whatif.slurm.backfill",
    "whatif.slurm.power",
    "whatif.slurm.job",
    "stacks.plan.slurm",
    "stacks.plan.slurm_accounts",
    "stacks.plan.slurm_nodes",
    "stacks.plan.slurm_scaling",
    "stacks.plan.slurm_login",
    "stacks.plan.slurm_topology",
    "stacks.validate.slurm",
    "stacks.validate.slurm_access",
)
KUEUE_ONLY = (
    "whatif.kueue.sched",
    "whatif.kueue.preempt",
    "whatif.kueue.cycle",
    "whatif.kueue.heads",
    "whatif.kueue.cohort",
    "whatif.kueue.queue",
)
FLEET_AND_TRACES = (
    "whatif.fleet.cluster",
    "whatif.fleet.copies",
    "whatif.fleet.run",
    "whatif.fleet.sched",
    "whatif.traces.replay",
    "whatif.traces.alibaba",
    "stacks.plan.fleet",
    "stacks.plan.fleet_egress",
    "stacks.validate.fleet",
)
NOT_FOR_QUEUES = ("render.fabric_pod", "render.admission", "render.pod_security_cel")
"""The team Namespaces' fabric and admission policy: the what-if reads the queues and flavors only."""
SETTING_RULES = (
    "stacks.validate.fabric_image",
    "catalog.fabric_images",
    "catalog.images",
    "stacks.validate.fabric_version",
    "catalog.gke_version",
    "stacks.plan.capacity_block",
    "stacks.validate.capacity_block_window",
)
"""Rules and planners that load only for a stack with the setting they are about: an image built from a recipe
(``runtimeImageBuild``), a pinned GKE version (``minMasterVersion``) or a rack-scale pool, an EC2 Capacity Block.
gke-kueue has none of them (eks-p6e-gb200 has the first and last, ``test_a_pinned_gke_version_loads_its_floors``
the second)."""


def modules_of(*args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args, "--format", "json", "--horizon-hours", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["stack"]  # the run reported
    return set(report["modules"])


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, must, never",
    [
        (
            ("--stack", "gke-kueue", "--workload", "workloads/gke-kueue.yaml"),
            (
                "whatif.kueue.sched",
                "stacks.plan.gke_pool",
                "render.kueue",
                "stacks.validate.load",
                "stacks.plan.gke_fabric",
            ),
            NEVER + SLURM_ONLY + FLEET_AND_TRACES + NOT_FOR_QUEUES + SETTING_RULES + ("stacks.plan.eks_pool",),
        ),
        (
            ("--stack", "eks-kueue", "--workload", "workloads/eks-kueue.yaml"),
            ("whatif.kueue.sched", "stacks.plan.eks_pool"),
            NEVER + SLURM_ONLY + FLEET_AND_TRACES + ("stacks.plan.gke_pool", "stacks.plan.gke_fabric"),
        ),
        (
            ("--stack", "gke-h100-512", "--workload", "workloads/gke-h100-512.yaml"),
            ("whatif.slurm.sched", "stacks.plan.slurm", "stacks.validate.slurm", "stacks.plan.slurm_topology"),
            NEVER + KUEUE_ONLY + FLEET_AND_TRACES + ("stacks.plan.eks_pool",),
        ),
        (
            (
                "--stack-file",
                "workloads/stacks/Pulumi.alibaba-replay-kueue.yaml",
                "--workload",
                "workloads/alibaba-openb.yaml",
            ),
            ("whatif.kueue.sched", "whatif.traces.alibaba"),
            NEVER + SLURM_ONLY + ("whatif.fleet.run", "stacks.plan.fleet", "stacks.plan.gke_fabric"),
        ),  # GKE without a fabric pool
        (
            ("--stack", "eks-p6e-gb200", "--workload", "workloads/eks-p6e-gb200.yaml"),
            (
                "stacks.validate.fabric_image",
                "catalog.fabric_images",
                "catalog.images",
                "catalog.gke_version",
                "stacks.plan.capacity_block",
                "stacks.validate.capacity_block_window",
            ),
            NEVER + KUEUE_ONLY + FLEET_AND_TRACES + ("stacks.plan.gke_pool",),
        ),
    ],
    ids=["gke-kueue", "eks-kueue", "gke-h100-512 (slurm)", "alibaba trace", "eks-p6e-gb200 (recipe image, block)"],
)
def test_a_run_loads_only_what_its_stack_needs(args, must, never):
    if "alibaba" in args[1] and not (ROOT.parent / "shared" / "traces").exists():
        pytest.skip("needs ../shared/traces")
    modules = modules_of(*args)
    assert not [m for m in must if m not in modules], "the probe saw too little: the run did not load its own model"
    assert not _loaded(modules, never), f"loaded but not needed for {args[1]}"


@pytest.mark.slow
def test_a_pinned_gke_version_loads_its_floors(tmp_path):
    """gke-kueue with ``cluster.minMasterVersion``: the version-floor rule loads (and gke-kueue without it does not)."""
    doc = yaml.safe_load((ROOT / "Pulumi.gke-kueue.yaml").read_text(encoding="utf-8"))
    doc["config"]["gpu-cluster:cluster"]["minMasterVersion"] = "1.33.5-gke.1080000"
    stack = tmp_path / "Pulumi.gke-kueue-pinned.yaml"
    stack.write_text(yaml.safe_dump(doc), encoding="utf-8")
    modules = modules_of("--stack-file", str(stack), "--workload", "workloads/gke-kueue.yaml")
    assert {"stacks.validate.fabric_version", "catalog.gke_version"} <= modules
    assert not _loaded(modules, ("stacks.validate.fabric_image", "stacks.plan.capacity_block"))


def test_the_deny_check_sees_a_loaded_module():
    loaded = {"stacks.plan.slurm", "pulumi_gcp.compute", "whatif.run"}
    assert _loaded(loaded, ("stacks.plan.slurm", "pulumi_gcp", "compose")) == ["pulumi_gcp", "stacks.plan.slurm"]
