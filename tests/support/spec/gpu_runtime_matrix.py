"""Stack configs covering every GPU runtime mode on each cloud where it exists, and their recordings (each program
run once per test session, shared read-only by the GPU runtime tests)."""

from __future__ import annotations

import functools
from typing import Any

from preview.engine import PROJECT_ROOT, Recording, read_stack_file, run_program
from tests.support.spec.edit import edits
from tests.support.spec.stack_configs import EKS, GKE


def gke_pool(name: str, machine: str, runtime: dict | None = None, **extra: Any) -> dict:
    pool = {"name": name, "machineType": machine, "zones": ["us-central1-a"], "maxNodes": 4, **extra}
    if runtime is not None:
        pool["gpuRuntime"] = runtime
    return pool


def eks_pool(name: str, machine: str, runtime: dict | None = None, **extra: Any) -> dict:
    pool = {"name": name, "machineType": machine, "zones": ["us-east-1a"], "maxNodes": 4, **extra}
    if runtime is not None:
        pool["gpuRuntime"] = runtime
    return pool


DEDICATED = [{"key": "dedicated", "value": "inference", "effect": "NoSchedule"}]

MATRIX: dict[str, dict[str, Any]] = {
    # GKE: GKE installs the driver and advertises; sharing is a node pool setting
    "gke-managed": edits(
        GKE,
        {
            "gpuRuntime": {"mode": "gke-managed"},
            "nodePools": [
                gke_pool("plain", "a3-highgpu-8g"),
                gke_pool("ts", "g2-standard-8", {"sharing": {"mode": "time-slicing", "replicas": 3}}),
                gke_pool("mps", "a3-highgpu-8g", {"sharing": {"mode": "mps", "replicas": 8}}),
                gke_pool("mig", "a2-ultragpu-1g", {"sharing": {"mode": "mig", "migProfile": "3g.40gb"}}),
            ],
        },
    ),
    # GKE: the GPU Operator owns three pools (MIG, time-slicing with a taint, plain); GKE keeps one
    "gke-operator": edits(
        GKE,
        {
            "gpuRuntime": {"mode": "gpu-operator"},
            "nodePools": [
                gke_pool("h100-mig", "a3-highgpu-8g", {"sharing": {"mode": "mig", "migProfile": "1g.10gb"}}),
                gke_pool(
                    "a100-ts", "a2-highgpu-1g", {"sharing": {"mode": "time-slicing", "replicas": 4}}, taints=DEDICATED
                ),
                gke_pool("a100", "a2-highgpu-2g"),
                gke_pool("l4-gke", "g2-standard-8", {"mode": "gke-managed"}),
            ],
        },
    ),
    "gke-operator-latest": edits(
        GKE,
        {
            "gpuRuntime": {"mode": "gpu-operator", "driverVersion": "latest"},
            "nodePools": [gke_pool("h100", "a3-highgpu-8g")],
        },
    ),
    # EKS: the device plugin chart; EFA plugin on the multi-node pool
    "eks-device-plugin": edits(
        EKS,
        {
            "gpuRuntime": {"mode": "device-plugin"},
            "nodePools": [
                eks_pool("p5", "p5.48xlarge", multiNode=True, maxNodes=2),
                eks_pool(
                    "l40s-ts", "g6e.xlarge", {"sharing": {"mode": "time-slicing", "replicas": 4}}, taints=DEDICATED
                ),
                eks_pool("l40s-mps", "g6e.xlarge", {"sharing": {"mode": "mps", "replicas": 2}}),
            ],
        },
    ),
    # EKS: the GPU Operator (MIG) next to a device-plugin pool; EFA plugin turned off for the stack
    "eks-operator": edits(
        EKS,
        {
            "gpuRuntime": {"mode": "gpu-operator", "efaDevicePlugin": False, "gpuFeatureDiscovery": False},
            "nodePools": [
                eks_pool(
                    "a100-mig",
                    "p4d.24xlarge",
                    {"sharing": {"mode": "mig", "migProfile": "3g.20gb"}},
                    multiNode=True,
                    maxNodes=2,
                ),
                eks_pool("l40s", "g6e.xlarge", {"mode": "device-plugin"}),
            ],
        },
    ),
}
"""Each config is ``stack_configs.GKE`` / ``EKS`` with a stack ``gpuRuntime`` section and its own pool list."""

EXAMPLE_STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))


def config(name: str) -> dict[str, Any]:
    """A matrix config, or an example stack's config by stack name."""
    if name in MATRIX:
        return MATRIX[name]
    return read_stack_file(PROJECT_ROOT / f"Pulumi.{name}.yaml")


@functools.cache
def recording(name: str) -> Recording:
    """The program's registrations for one config (recorded once; do not mutate)."""
    return run_program(config(name))


ALL_CONFIGS = sorted(MATRIX) + EXAMPLE_STACKS
